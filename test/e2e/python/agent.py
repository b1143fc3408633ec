"""A small Python agent for loopwatch's serve e2e (test/e2e/serve-python.e2e.test.ts).

It runs the real OpenTelemetry SDK from PyPI and exports OTLP/HTTP protobuf, as a Python agent in
production would. Three instrumentation dialects, one per agent:
  - OpenInference (its own tracer from `openinference-instrumentation`): an order-lookup support bot;
  - the gen_ai semantic conventions, written with the plain SDK: a weather agent;
  - Traceloop/OpenLLMetry-shaped spans, written with the plain SDK: a refund agent.
The model is a mock in plain Python (no LLM here): each scenario scripts what the "model" asks for
next. Some runs loop on a tool; the others do honest work (pagination, polling with progress,
different arguments). Each run is one trace; what was run is written to --truth as JSON Lines.
"""

from __future__ import annotations

import argparse
import json
import time

from openinference.instrumentation import TracerProvider as OITracerProvider
from openinference.instrumentation import using_metadata
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor


class MockModel:
    """Plain Python stand-in for an LLM: returns the next scripted tool call, or None when done."""

    def __init__(self, script):
        self.script = list(script)
        self.step = 0

    def next_call(self, last_result):
        if self.step >= len(self.script):
            return None
        call = self.script[self.step]
        self.step += 1
        return call


# What each tool "returns": the looping tools answer the same thing forever.
def run_tool(name, args):
    if name == "search_orders":
        cid = args["customer_id"]
        return {"orders": [] if cid == 42 else [{"order_id": cid * 10, "status": "shipped"}]}
    if name == "get_order":
        return {"order_id": args["order_id"], "status": "shipped", "items": 2}
    if name == "get_weather":
        return {"city": args["city"], "temp_c": len(args["city"]) * 3}
    if name == "check_job":
        return {"job": args["job"], "progress": args["_progress"]}
    if name == "fetch_forecast":
        return {"city": args["city"], "forecast": "unavailable"}
    if name == "lookup_policy":
        return {"topic": args["topic"], "text": "Refunds within 30 days." if args.get("page") is None else f"page {args['page']}"}
    raise ValueError(name)


SCENARIOS = {
    # name: (dialect, prompt, tool calls, expected detections as (kind, level, tool))
    "oi-loop": ("openinference", "order-lookup", [("search_orders", {"customer_id": 42})] * 6, [("repeat", "warning", "search_orders"), ("repeat", "critical", "search_orders")]),
    "oi-honest": ("openinference", "order-lookup", [("search_orders", {"customer_id": i}) for i in (1, 2, 3)] + [("get_order", {"order_id": 10}), ("get_order", {"order_id": 20})], []),
    "genai-loop": ("gen_ai", "weather-report", [("fetch_forecast", {"city": "Oslo"})] * 5, [("repeat", "warning", "fetch_forecast"), ("repeat", "critical", "fetch_forecast")]),
    "genai-honest": ("gen_ai", "weather-report", [("get_weather", {"city": c}) for c in ("Oslo", "Lima", "Pune", "Kyiv")] + [("check_job", {"job": "j1", "_progress": p}) for p in (10, 40, 80, 100)], []),
    "traceloop-loop": ("traceloop", "refund-policy", [("lookup_policy", {"topic": "refund"})] * 5, [("repeat", "warning", "lookup_policy"), ("repeat", "critical", "lookup_policy")]),
    "traceloop-honest": ("traceloop", "refund-policy", [("lookup_policy", {"topic": "refund", "page": p}) for p in range(1, 5)], []),
}


def hex_trace_id(span):
    return format(span.get_span_context().trace_id, "032x")


def chat_span(tracer, dialect, step):
    """The model call between tool calls (a mock: it only takes a little time)."""
    if dialect == "openinference":
        with tracer.start_as_current_span("llm", openinference_span_kind="llm") as span:
            span.set_attribute("llm.model_name", "mock-model")
            time.sleep(0.001)
    else:
        with tracer.start_as_current_span("chat mock-model", attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "mock-model", "gen_ai.system": "mock"}):
            time.sleep(0.001)


def tool_span(tracer, dialect, name, args):
    public_args = {k: v for k, v in args.items() if not k.startswith("_")}
    result = run_tool(name, args)
    if dialect == "openinference":
        with tracer.start_as_current_span(name, openinference_span_kind="tool") as span:
            span.set_tool(name=name, parameters={"type": "object", "properties": {k: {"type": "string"} for k in public_args}})
            span.set_input(json.dumps(public_args), mime_type="application/json")
            span.set_output(json.dumps(result), mime_type="application/json")
    elif dialect == "gen_ai":
        with tracer.start_as_current_span(
            f"execute_tool {name}",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.arguments": json.dumps(public_args),
                "gen_ai.tool.call.result": json.dumps(result),
            },
        ):
            pass
    else:
        with tracer.start_as_current_span(
            f"{name}.tool",
            attributes={
                "traceloop.span.kind": "tool",
                "traceloop.entity.name": name,
                "traceloop.entity.input": json.dumps({"args": [], "kwargs": public_args}),
                "traceloop.entity.output": json.dumps(result),
            },
        ):
            pass


def run_agent(tracers, scenario, label):
    dialect, prompt, calls, expected = SCENARIOS[scenario]
    tracer = tracers[dialect]
    model = MockModel(calls)
    tools = []
    if dialect == "openinference":
        with using_metadata({"prompt_name": prompt}):
            with tracer.start_as_current_span("support-bot", openinference_span_kind="agent") as root:
                trace_id = hex_trace_id(root)
                drive(tracer, dialect, model, tools)
    elif dialect == "gen_ai":
        with tracer.start_as_current_span("invoke_agent weather", attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather", "gen_ai.prompt.name": prompt}) as root:
            trace_id = hex_trace_id(root)
            drive(tracer, dialect, model, tools)
    else:
        with tracer.start_as_current_span("refund_agent.agent", attributes={"traceloop.span.kind": "agent", "traceloop.entity.name": "refund_agent", "traceloop.prompt.key": prompt}) as root:
            trace_id = hex_trace_id(root)
            drive(tracer, dialect, model, tools)
    return {
        "label": label,
        "scenario": scenario,
        "trace_id": trace_id,
        "dialect": dialect,
        "prompt": prompt,
        "tools": tools,
        "looping": len(expected) > 0,
        "expected": [{"kind": k, "level": lv, "tool": t, "prompt": prompt} for (k, lv, t) in expected],
    }


def drive(tracer, dialect, model, tools):
    last = None
    step = 0
    while True:
        chat_span(tracer, dialect, step)
        call = model.next_call(last)
        if call is None:
            return
        name, args = call
        tool_span(tracer, dialect, name, args)
        tools.append(name)
        step += 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint", required=True, help="OTLP/HTTP traces URL (.../v1/traces)")
    parser.add_argument("--truth", required=True, help="JSON Lines file: one line per run")
    parser.add_argument("--label", default="run")
    parser.add_argument("--rounds", type=int, default=2, help="every scenario runs this many times")
    parser.add_argument("--pause-ms", type=int, default=0, help="pause between runs")
    args = parser.parse_args()

    resource = Resource.create({"service.name": "python-agent", "service.namespace": "loopwatch-e2e"})
    exporter = OTLPSpanExporter(endpoint=args.endpoint)
    # OpenInference's tracer provider is the SDK's with OpenInference's span helpers on top.
    oi_provider = OITracerProvider(resource=resource)
    oi_provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=100))
    sdk_provider = TracerProvider(resource=resource)
    sdk_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=args.endpoint), schedule_delay_millis=100))
    trace.set_tracer_provider(sdk_provider)
    tracers = {
        "openinference": oi_provider.get_tracer("support-bot"),
        "gen_ai": sdk_provider.get_tracer("weather-agent"),
        "traceloop": sdk_provider.get_tracer("refund-agent"),
    }
    with open(args.truth, "a", encoding="utf-8") as out:
        for r in range(args.rounds):
            for scenario in SCENARIOS:
                record = run_agent(tracers, scenario, f"{args.label}-{r}")
                out.write(json.dumps(record) + "\n")
                out.flush()
                if args.pause_ms:
                    time.sleep(args.pause_ms / 1000)
    oi_provider.shutdown()
    sdk_provider.shutdown()


if __name__ == "__main__":
    main()

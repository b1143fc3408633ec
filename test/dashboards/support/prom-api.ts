/**
 * The Prometheus HTTP API calls the dashboard tests need beyond the e2e harness' `query()`: an
 * instant query at a given time, range queries, label values and raw sample timestamps. Grafana
 * makes the same calls.
 */
export interface Sample {
  readonly metric: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Series {
  readonly metric: Readonly<Record<string, string>>;
  /** [epoch seconds, value] */
  readonly values: readonly (readonly [number, number])[];
}

interface ApiResponse {
  readonly status: string;
  readonly error?: string;
  readonly data?: unknown;
}

interface VectorData {
  readonly resultType: 'vector';
  readonly result: readonly { readonly metric: Record<string, string>; readonly value: readonly [number, string] }[];
}

interface MatrixData {
  readonly resultType: 'matrix';
  readonly result: readonly { readonly metric: Record<string, string>; readonly values: readonly (readonly [number, string])[] }[];
}

export class PromApi {
  constructor(private readonly baseUrl: string) {}

  private async call(path: string, params: Record<string, string>, method: 'GET' | 'POST' = 'POST'): Promise<unknown> {
    const query = new URLSearchParams(params);
    // POST for queries, as the provisioned datasource does (long queries do not hit URL limits).
    const res =
      method === 'POST'
        ? await fetch(`${this.baseUrl}${path}`, { method, body: query, signal: AbortSignal.timeout(20_000) })
        : await fetch(`${this.baseUrl}${path}?${query.toString()}`, { signal: AbortSignal.timeout(20_000) });
    const json = (await res.json()) as ApiResponse;
    if (json.status !== 'success') throw new Error(`${path} ${params.query ?? params['match[]'] ?? ''}: ${json.error ?? res.status}`);
    return json.data;
  }

  /** Instant query evaluated at `time` (epoch seconds). */
  async instant(query: string, time: number): Promise<Sample[]> {
    const data = (await this.call('/api/v1/query', { query, time: String(time) })) as VectorData | MatrixData;
    if (data.resultType !== 'vector') throw new Error(`expected a vector from ${query}, got ${data.resultType}`);
    return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  }

  /** Range query from `start` to `end` (epoch seconds) every `step` seconds. */
  async range(query: string, start: number, end: number, step: number): Promise<Series[]> {
    const data = (await this.call('/api/v1/query_range', { query, start: String(start), end: String(end), step: String(step) })) as MatrixData;
    return data.result.map((r) => ({ metric: r.metric, values: r.values.map(([t, v]) => [t, Number(v)] as const) }));
  }

  /** Raw samples of a range selector at `time`. */
  async samples(selector: string, time: number): Promise<Series[]> {
    const data = (await this.call('/api/v1/query', { query: selector, time: String(time) })) as MatrixData;
    if (data.resultType !== 'matrix') throw new Error(`expected a matrix from ${selector}`);
    return data.result.map((r) => ({ metric: r.metric, values: r.values.map(([t, v]) => [t, Number(v)] as const) }));
  }

  /** What a label_values(selector, label) variable lists. */
  async labelValues(label: string, selector: string, start: number, end: number): Promise<string[]> {
    const data = (await this.call(`/api/v1/label/${encodeURIComponent(label)}/values`, { 'match[]': selector, start: String(start), end: String(end) }, 'GET')) as string[];
    return [...data].sort();
  }
}

#!/usr/bin/env bash
# Regenerates src/formats/protobuf/gen/ (committed): TypeScript for the OTLP trace messages and the
# google.rpc.Status error body, made by protoc-gen-es (@bufbuild/protobuf's generator) from the
# official definitions as their owners publish them on Maven Central:
#   io.opentelemetry.proto:opentelemetry-proto      (opentelemetry-proto's .proto files)
#   com.google.api.grpc:proto-google-common-protos  (google/rpc/status.proto)
# Needs mvn, unzip and npm; run it after changing a version below, then commit the result.
# Nothing is hand-written: the wire format and the JSON mapping come from @bufbuild/protobuf.
set -euo pipefail
OTLP_PROTO_VERSION=1.11.0-alpha
COMMON_PROTOS_VERSION=2.63.1
BUF_VERSION=1.75.0
PROTOC_GEN_ES_VERSION=2.17.0

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$repo/src/formats/protobuf/gen"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

jar_of() { # group:artifact:version -> path of the jar in the local Maven repository
  local g="${1%%:*}" rest="${1#*:}"; local a="${rest%%:*}" v="${rest#*:}"
  mvn -q dependency:get -Dartifact="$1" -Dtransitive=false >&2
  echo "${HOME}/.m2/repository/${g//.//}/$a/$v/$a-$v.jar"
}
otlp_jar="$(jar_of "io.opentelemetry.proto:opentelemetry-proto:$OTLP_PROTO_VERSION")"
common_jar="$(jar_of "com.google.api.grpc:proto-google-common-protos:$COMMON_PROTOS_VERSION")"
mkdir -p "$tmp/proto"
unzip -q -o "$otlp_jar" -d "$tmp/proto" \
  'opentelemetry/proto/common/v1/common.proto' \
  'opentelemetry/proto/resource/v1/resource.proto' \
  'opentelemetry/proto/trace/v1/trace.proto' \
  'opentelemetry/proto/collector/trace/v1/trace_service.proto'
unzip -q -o "$common_jar" -d "$tmp/proto" 'google/rpc/status.proto'

cat >"$tmp/buf.gen.yaml" <<YAML
version: v2
inputs:
  - directory: proto
plugins:
  - local: protoc-gen-es
    out: gen
    opt: [target=ts, import_extension=js]
YAML
(cd "$tmp" && npm exec --yes --package="@bufbuild/buf@$BUF_VERSION" --package="@bufbuild/protoc-gen-es@$PROTOC_GEN_ES_VERSION" -- buf generate)
rm -rf "$out"
mkdir -p "$out"
cp -r "$tmp/gen/." "$out/"
{
  echo "# Generated: do not edit"
  echo
  echo "Made by \`scripts/gen-otlp.sh\` with protoc-gen-es $PROTOC_GEN_ES_VERSION (buf $BUF_VERSION) from"
  echo "io.opentelemetry.proto:opentelemetry-proto:$OTLP_PROTO_VERSION and"
  echo "com.google.api.grpc:proto-google-common-protos:$COMMON_PROTOS_VERSION (google/rpc/status.proto)."
} >"$out/README.md"
echo "gen-otlp: wrote $(find "$out" -name '*.ts' | wc -l) files to $out" >&2

"""A real OTLP/gRPC trace receiver for engine/tests/telemetry_export.rs.

The official OpenTelemetry proto service (`opentelemetry-proto`'s generated
`trace_service_pb2_grpc`) served by `grpcio` on 127.0.0.1, plaintext. Prints
`port N` once listening, then one line per `TraceService/Export` request: the
decoded request serialized again, base64, so the Rust test checks it with the
same assertions as the OTLP/HTTP export. Stops at the end of stdin.
"""

import base64
import sys
import threading
from concurrent import futures

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

printing = threading.Lock()


class Receiver(trace_service_pb2_grpc.TraceServiceServicer):
    def Export(self, request, context):
        line = base64.b64encode(request.SerializeToString()).decode("ascii")
        with printing:
            print(line, flush=True)
        return trace_service_pb2.ExportTraceServiceResponse()


server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Receiver(), server)
port = server.add_insecure_port("127.0.0.1:0")
server.start()
print(f"port {port}", flush=True)
sys.stdin.read()
server.stop(0)

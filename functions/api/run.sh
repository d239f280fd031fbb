#!/bin/sh
# Lambda entry point for the API function. Lambda Web Adapter (the layer, started through
# AWS_LAMBDA_EXEC_WRAPPER=/opt/bootstrap) turns each API Gateway invocation into an HTTP
# request to this server on port 8080 and streams the response back (response_stream mode).
export PYTHONPATH="/opt/python:${LAMBDA_TASK_ROOT:-.}:${PYTHONPATH:-}"
exec python3 -m zerocode.entrypoints.lambda_api

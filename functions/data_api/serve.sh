#!/bin/sh
# Lambda entry point for the data API function (the /_api/* of every preview and site).
# Lambda Web Adapter (the layer, started through AWS_LAMBDA_EXEC_WRAPPER=/opt/bootstrap)
# turns each function URL invocation, which CloudFront makes, into an HTTP request to this
# server on port 8080 (buffered: the answers are small).
export PYTHONPATH="/opt/python:${LAMBDA_TASK_ROOT:-.}:${PYTHONPATH:-}"
exec python3 -m zerocode.entrypoints.lambda_data_api

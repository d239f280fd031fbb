// Where the API is. Empty: the same origin as this page (`make run`). On AWS the deploy
// step writes this file with the API Gateway URL (docs/operations.md).
window.ZEROCODE_CONFIG = window.ZEROCODE_CONFIG || { api: "" };

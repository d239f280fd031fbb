"""DynamoDB adapters: the serverless stores, one table per port."""

"""AWS adapters: S3 workspace, CloudFront publisher, CodeBuild builder, Cognito accounts."""

"""zerocode's AWS infrastructure (CDK, Python): ``stack.build_app`` builds the app."""

"""Vue builds on CodeBuild, and their completion events to ``functions/build_events``.

Every build is started by ``zerocode.adapters.codebuild_builder`` with its own S3 source
(``sources/{appId}/{buildId}.zip``), buildspec and artifact location
(``builds/{appId}/{buildId}/``), so the project defines neither; its role may read the
sources prefix, write the builds prefix and use the npm cache prefix, nothing else of
the bucket. CodeBuild writes with the builds key, which CloudFront may decrypt.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_codebuild as codebuild
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from constructs import Construct

from zerocode_infra.nag import (
    KMS_GRANT_ACTIONS,
    S3_GRANT_ACTIONS,
    account_and_region,
    objects,
    ref,
    suppress,
)
from zerocode_infra.storage import BUILDS, CACHE, SOURCES

# Amazon Linux 2023 aarch64 standard 3.0 carries Node.js 20 and 22 (the buildspec asks 20).
BUILD_IMAGE = codebuild.LinuxArmBuildImage.AMAZON_LINUX_2023_STANDARD_3_0
FINAL_STATES = ["SUCCEEDED", "FAILED", "FAULT", "STOPPED", "TIMED_OUT"]
# Never used: every StartBuild overrides the source type, location and buildspec.
_PLACEHOLDER_SPEC = {"version": "0.2", "phases": {"build": {"commands": [
    "echo 'zerocode starts each build with its own source and buildspec'; exit 1"]}}}


class Builds(Construct):
    def __init__(self, scope: Construct, id: str, *, bucket: s3.IBucket, key: kms.IKey,
                 removal_policy: RemovalPolicy) -> None:
        super().__init__(scope, id)
        log_group = logs.LogGroup(self, "Logs", retention=logs.RetentionDays.ONE_MONTH,
                                  removal_policy=removal_policy)
        self.project = codebuild.Project(
            self, "Vue", description="zerocode Vue project builds",
            build_spec=codebuild.BuildSpec.from_object(_PLACEHOLDER_SPEC),
            environment=codebuild.BuildEnvironment(
                build_image=BUILD_IMAGE, compute_type=codebuild.ComputeType.SMALL),
            encryption_key=key,
            timeout=Duration.minutes(15), queued_timeout=Duration.minutes(15),
            logging=codebuild.LoggingOptions(
                cloud_watch=codebuild.CloudWatchLoggingOptions(log_group=log_group)))
        # The npm cache, set on the L1 resource: Cache.bucket() would also grant the role
        # read and write on the whole bucket, not just the cache prefix.
        cfn = self.project.node.default_child
        assert isinstance(cfn, codebuild.CfnProject)
        cfn.cache = codebuild.CfnProject.ProjectCacheProperty(
            type="S3", location=f"{bucket.bucket_name}/{CACHE}")
        bucket.grant_read(self.project, f"{SOURCES}*")
        bucket.grant_put(self.project, f"{BUILDS}*")
        bucket.grant_read_write(self.project, f"{CACHE}/*")
        account, region = account_and_region(self)
        suppress(self.project, "IAM5", "CodeBuild's role reads build sources, writes build "
                                       "outputs and uses the npm cache, each under its own "
                                       "prefix of the builds bucket, and writes its own logs "
                                       "and reports.", children=True, applies_to=[
            *S3_GRANT_ACTIONS, *KMS_GRANT_ACTIONS,
            objects(bucket, SOURCES), objects(bucket, BUILDS), objects(bucket, f"{CACHE}/"),
            # CDK's standard grants for the project's own log streams and report groups.
            f"Resource::arn:<AWS::Partition>:logs:{region}:{account}:log-group:"
            f"/aws/codebuild/{ref(self.project)}:*",
            f"Resource::arn:<AWS::Partition>:codebuild:{region}:{account}:report-group/"
            f"{ref(self.project)}-*"])

    def route_events(self, handler: lambda_.IFunction) -> events.Rule:
        """Final build states of this project invoke ``functions/build_events``."""
        return events.Rule(
            self, "Finished", description="zerocode build finished -> record and publish",
            event_pattern=events.EventPattern(
                source=["aws.codebuild"], detail_type=["CodeBuild Build State Change"],
                detail={"project-name": [self.project.project_name],
                        "build-status": FINAL_STATES}),
            targets=[targets.LambdaFunction(handler, retry_attempts=4,
                                            max_event_age=Duration.hours(2))])

    def grant(self, grantee: iam.IGrantable, *actions: str) -> None:
        iam.Grant.add_to_principal(grantee=grantee, resource_arns=[self.project.project_arn],
                                   actions=[f"codebuild:{a}" for a in actions])

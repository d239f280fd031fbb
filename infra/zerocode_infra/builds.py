"""Vue builds on CodeBuild, their scoped data role, and their completion events.

A build compiles untrusted code, so neither the project nor its role may touch tenant data
(docs/security.md, "AWS builds: scoped credentials"). The project has no source and no
artifacts, and its role may write its own logs and reports and use the npm cache prefix of
the builds bucket (``npm ci`` checks every package against the platform's lockfile), nothing
else: no listing of the bucket, no ``sources/`` read, no ``builds/`` write. Each build's
data access comes from the *build data role*, which only the roles that start builds may
assume and always with a session policy naming that build's source object and output prefix
(``zerocode.adapters.aws.codebuild_builder.session_policy``); the buildspec uses those
credentials to download its source and upload its output, and nothing else sees them.
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
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from zerocode_infra.nag import (
    KMS_GRANT_ACTIONS,
    account_and_region,
    objects,
    ref,
    suppress,
)
from zerocode_infra.storage import BUILDS, CACHE, SOURCES

# Amazon Linux 2023 aarch64 standard 3.0 carries Node.js 20 and 22 (the buildspec asks 20).
BUILD_IMAGE = codebuild.LinuxArmBuildImage.AMAZON_LINUX_2023_STANDARD_3_0
FINAL_STATES = ["SUCCEEDED", "FAILED", "FAULT", "STOPPED", "TIMED_OUT"]
BUILD_TIMEOUT, QUEUED_TIMEOUT = Duration.minutes(15), Duration.minutes(15)
# The starter asks for credentials lasting a queued plus a running build (30 minutes, the
# builder's CREDENTIAL_SECONDS); one hour is the least a role's maximum session may be.
DATA_ROLE_MAX_SESSION = Duration.hours(1)
# Never used: every StartBuild brings its own buildspec (and says: no source, no artifacts).
_PLACEHOLDER_SPEC = {
    "version": "0.2",
    "phases": {
        "build": {
            "commands": [
                "echo 'zerocode starts each build with its own source and buildspec'; exit 1"
            ]
        }
    },
}


class Builds(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        bucket: s3.IBucket,
        key: kms.IKey,
        removal_policy: RemovalPolicy,
    ) -> None:
        super().__init__(scope, id)
        log_group = logs.LogGroup(
            self, "Logs", retention=logs.RetentionDays.ONE_MONTH, removal_policy=removal_policy
        )
        self.bucket, self.key = bucket, key
        self.project = codebuild.Project(
            self,
            "Vue",
            description="zerocode Vue project builds",
            build_spec=codebuild.BuildSpec.from_object(_PLACEHOLDER_SPEC),
            environment=codebuild.BuildEnvironment(
                build_image=BUILD_IMAGE, compute_type=codebuild.ComputeType.SMALL
            ),
            encryption_key=key,
            timeout=BUILD_TIMEOUT,
            queued_timeout=QUEUED_TIMEOUT,
            logging=codebuild.LoggingOptions(
                cloud_watch=codebuild.CloudWatchLoggingOptions(log_group=log_group)
            ),
        )
        # The npm cache, set on the L1 resource: Cache.bucket() would also grant the role
        # read and write on the whole bucket, not just the cache prefix. The role gets the
        # cache objects and the two bucket facts CodeBuild's cache upload asks for; no List.
        cfn = self.project.node.default_child
        assert isinstance(cfn, codebuild.CfnProject)
        cfn.cache = codebuild.CfnProject.ProjectCacheProperty(
            type="S3", location=f"{bucket.bucket_name}/{CACHE}"
        )
        self.project.add_to_role_policy(
            iam.PolicyStatement(
                actions=["s3:GetObject", "s3:PutObject"],
                resources=[bucket.arn_for_objects(f"{CACHE}/*")],
            )
        )
        self.project.add_to_role_policy(
            iam.PolicyStatement(
                actions=["s3:GetBucketAcl", "s3:GetBucketLocation"], resources=[bucket.bucket_arn]
            )
        )
        account, region = account_and_region(self)
        suppress(
            self.project,
            "IAM5",
            "CodeBuild's role uses the npm cache under its own "
            "prefix of the builds bucket and writes its own logs "
            "and reports; it has no rights on build sources or "
            "outputs.",
            children=True,
            applies_to=[
                *KMS_GRANT_ACTIONS,
                objects(bucket, f"{CACHE}/"),
                # CDK's standard grants for the project's own log streams and report groups.
                f"Resource::arn:<AWS::Partition>:logs:{region}:{account}:log-group:"
                f"/aws/codebuild/{ref(self.project)}:*",
                f"Resource::arn:<AWS::Partition>:codebuild:{region}:{account}:report-group/"
                f"{ref(self.project)}-*",
            ],
        )
        self.data_role: iam.Role | None = None

    def allow_start(self, starter: iam.IRole) -> iam.Role:
        """The build data role, trusted by ``starter`` (the role that starts builds) and
        by no one else; ``starter`` may assume it. Its own policy is the most a build's
        credentials can ever do (read any source zip, write any build output, with the
        bucket's key); every session narrows it to one build."""
        if self.data_role is not None:
            raise ValueError(
                "the build data role trusts one starter; add a principal to "
                "its trust policy instead of calling allow_start again"
            )
        role = iam.Role(
            self,
            "DataRole",
            assumed_by=iam.ArnPrincipal(starter.role_arn),
            max_session_duration=DATA_ROLE_MAX_SESSION,
            description="zerocode build data: each Vue build's source and output, scoped "
            "per build by a session policy",
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["s3:GetObject"], resources=[self.bucket.arn_for_objects(f"{SOURCES}*")]
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["s3:PutObject"], resources=[self.bucket.arn_for_objects(f"{BUILDS}*")]
            )
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["kms:Decrypt", "kms:GenerateDataKey"], resources=[self.key.key_arn]
            )
        )
        role.grant_assume_role(starter)
        suppress(
            role,
            "IAM5",
            "The build data role reads build sources and writes build "
            "outputs under their prefixes; each build's session policy "
            "narrows it to that build's own source object and prefix.",
            children=True,
            applies_to=[objects(self.bucket, SOURCES), objects(self.bucket, BUILDS)],
        )
        self.data_role = role
        return role

    def route_events(
        self, handler: lambda_.IFunction, undelivered: sqs.IQueue | None = None
    ) -> events.Rule:
        """Final build states of this project invoke ``functions/build_events``; events
        EventBridge cannot deliver after its retries go to ``undelivered``."""
        return events.Rule(
            self,
            "Finished",
            description="zerocode build finished -> record and publish",
            event_pattern=events.EventPattern(
                source=["aws.codebuild"],
                detail_type=["CodeBuild Build State Change"],
                detail={"project-name": [self.project.project_name], "build-status": FINAL_STATES},
            ),
            targets=[
                targets.LambdaFunction(
                    handler,
                    retry_attempts=4,
                    max_event_age=Duration.hours(2),
                    dead_letter_queue=undelivered,
                )
            ],
        )

    def grant(self, grantee: iam.IGrantable, *actions: str) -> None:
        iam.Grant.add_to_principal(
            grantee=grantee,
            resource_arns=[self.project.project_arn],
            actions=[f"codebuild:{a}" for a in actions],
        )

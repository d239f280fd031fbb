"""Builds on CodeBuild (Lambda compute, the platform's image), their data role, their events.

A build compiles and runs untrusted code, so what its credentials reach is its own run's
objects and nothing else (docs/security.md; issues 23 and 42). CodeBuild runs each build
under a session of the project's role named ``AWSCodeBuild-{build uuid}``; that role may read
and delete only ``sources/${aws:userid}/*`` (``build_handoff.OWN_SOURCES``): the prefix of the
session asking, so one run can never read another's source. The platform puts a run's source
there after StartBuild (nothing of it is in the run's record or events); inside it is a
presigned POST of one archive to ``staging/``, bounded in size and signed by the *build data
role*, which only the role that starts builds may assume and always with a session policy
naming that one archive (``zerocode.adapters.aws.build_sources``). build_events (or the API's
poller) unpacks the archive into ``builds/`` with the platform's own rules. The project runs
on Lambda compute (Arm, no provisioning, no queue) with the platform's build image, a
Docker image asset built from ``layers/core/python`` with Node 22, the pinned toolchain,
headless Chromium and ``zerocode.buildbox`` installed: a build installs nothing, so there is
no npm cache. The project has no source, no artifacts, no cache, no VPC and no timeouts
(Lambda compute refuses custom timeouts and caps a run at 15 minutes); its role writes its
own logs, pulls the image and reads its own source: nothing of any other object.
"""

from __future__ import annotations

import jsii
from aws_cdk import Duration, RemovalPolicy, Stack
from aws_cdk import aws_codebuild as codebuild
from aws_cdk import aws_ecr as ecr
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from zerocode.adapters.aws.build_handoff import OWN_SOURCES
from zerocode_infra.build_image import BuildImage
from zerocode_infra.log_groups import log_group
from zerocode_infra.nag import account_and_region, objects, ref, suppress
from zerocode_infra.storage import STAGING

BUILD_COMPUTE = codebuild.ComputeType.LAMBDA_4GB  # BUILD_LAMBDA_4GB in the template
LAMBDA_COMPUTE = {
    codebuild.ComputeType.LAMBDA_1GB,
    codebuild.ComputeType.LAMBDA_2GB,
    codebuild.ComputeType.LAMBDA_4GB,
    codebuild.ComputeType.LAMBDA_8GB,
    codebuild.ComputeType.LAMBDA_10GB,
}
LAMBDA_ARM = "ARM_LAMBDA_CONTAINER"  # CloudFormation's Environment.Type for Arm Lambda compute
FINAL_STATES = ["SUCCEEDED", "FAILED", "FAULT", "STOPPED", "TIMED_OUT"]
# Lambda compute stops a build after 15 minutes and starts it without a queue.
LONGEST_BUILD = Duration.minutes(15)
# The starter's credentials sign the build's output POST, which must outlive the build;
# one hour is the least a role's maximum session may be.
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


@jsii.implements(codebuild.IBuildImage)
class LambdaArmImage:
    """The build image as an Arm Lambda compute build image, by digest. CDK's
    ``LinuxArmLambdaBuildImage`` offers only CodeBuild's curated images; this is its
    custom-image counterpart (AWS: "Run builds on AWS Lambda compute", custom images): the
    project's role pulls it from its own repository (``SERVICE_ROLE``), which CDK grants
    because ``repository`` is set."""

    def __init__(self, image: BuildImage) -> None:
        self._image = image

    @property
    def type(self) -> str:
        return LAMBDA_ARM

    @property
    def image_id(self) -> str:
        return self._image.image_id

    @property
    def default_compute_type(self) -> codebuild.ComputeType:
        return BUILD_COMPUTE

    @property
    def image_pull_principal_type(self) -> codebuild.ImagePullPrincipalType:
        return codebuild.ImagePullPrincipalType.SERVICE_ROLE

    @property
    def repository(self) -> ecr.IRepository:
        return self._image.repository

    @property
    def secrets_manager_credentials(self) -> None:
        return None

    def validate(
        self,
        *,
        compute_type: codebuild.ComputeType | None = None,
        privileged: bool | None = None,
        host_kernel: object | None = None,
        fleet: object | None = None,
        docker_server: object | None = None,
        **_: object,
    ) -> list[str]:
        """What Lambda compute refuses (CDK's checks for its own Lambda images)."""
        errors = []
        if compute_type is not None and compute_type not in LAMBDA_COMPUTE:
            errors.append(f"Lambda compute images need a Lambda compute type, not {compute_type}")
        if privileged:
            errors.append("Lambda compute has no privileged mode")
        for name, given in (
            ("host kernel", host_kernel),
            ("fleet", fleet),
            ("docker server", docker_server),
        ):
            if given is not None:
                errors.append(f"Lambda compute takes no {name}")
        return errors

    def run_script_buildspec(self, entrypoint: str) -> codebuild.BuildSpec:
        return codebuild.LinuxArmLambdaBuildImage.AMAZON_LINUX_2023_NODE_22.run_script_buildspec(
            entrypoint
        )


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
        logs_group = log_group(self, "Logs", removal_policy=removal_policy)
        self.bucket, self.key = bucket, key
        self.image = BuildImage(self, "Image")
        self.project = codebuild.Project(
            self,
            "Vue",
            description="zerocode builds: Vue builds, runtime checks and covers",
            build_spec=codebuild.BuildSpec.from_object(_PLACEHOLDER_SPEC),
            environment=codebuild.BuildEnvironment(
                build_image=LambdaArmImage(self.image), compute_type=BUILD_COMPUTE
            ),
            # No encryption_key: CDK would grant the role encrypt and decrypt on the key,
            # which is the builds bucket's data key, and the project has nothing to encrypt
            # with it (no artifacts, no cache, logs in CloudWatch). CodeBuild's default is
            # the account's AWS managed S3 key.
            # No timeout or queued_timeout and no cache: Lambda compute refuses them.
            logging=codebuild.LoggingOptions(
                cloud_watch=codebuild.CloudWatchLoggingOptions(log_group=logs_group)
            ),
            # No test reports: the role writes its logs, pulls the image and reads its own
            # source, nothing else.
            grant_report_group_permissions=False,
        )
        self._read_own_source(self.project.role)
        account, region = account_and_region(self)
        suppress(
            self.project,
            "IAM5",
            "CodeBuild's role writes the project's own log streams and "
            "pulls the build image; ECR's GetAuthorizationToken takes no "
            "resource by AWS design. In S3 it reads and deletes only "
            "sources/${aws:userid}/*: the asking run's own session's "
            "source, which no other run can name.",
            children=True,
            applies_to=[
                # CDK's standard grant for the project's own log streams.
                f"Resource::arn:<AWS::Partition>:logs:{region}:{account}:log-group:"
                f"/aws/codebuild/{ref(self.project)}:*",
                "Resource::*",
                # cdk-nag writes the policy variable ${aws:userid} as <aws:userid>.
                objects(bucket, OWN_SOURCES[:-1].replace("${aws:userid}", "<aws:userid>")),
            ],
        )
        suppress(
            self.project,
            "CB4",
            "The project has no artifacts, no cache and no S3 logs, so "
            "it encrypts nothing; naming the builds bucket's key would "
            "give the build's role decrypt rights through CodeBuild. It "
            "decrypts only through S3, which lets it read its own source.",
        )
        suppress(
            self.project,
            "CB5",
            "Builds run the platform's own image (layers/core/python/"
            "zerocode/buildbox/Dockerfile): Node 22, the pinned toolchain "
            "and headless Chromium preinstalled, so a build installs "
            "nothing and checks the app in a browser.",
        )
        self.data_role: iam.Role | None = None

    @property
    def role_id(self) -> str:
        """The project role's unique id (``AROA…``): the start of each run's ``aws:userid``."""
        role = self.project.role
        assert isinstance(role, iam.Role)
        return role.role_id

    def _read_own_source(self, role: iam.IRole | None) -> None:
        """Read and delete the asking session's own source objects, decrypting them through
        S3 only; nothing else of the bucket or the key."""
        assert role is not None
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=["s3:GetObject", "s3:DeleteObject"],
                resources=[self.bucket.arn_for_objects(OWN_SOURCES)],
            )
        )
        role.add_to_principal_policy(self._key_through_s3("kms:Decrypt"))

    def _key_through_s3(self, action: str) -> iam.PolicyStatement:
        """``action`` with the builds bucket's key, only in requests S3 makes."""
        return iam.PolicyStatement(
            actions=[action],
            resources=[self.key.key_arn],
            conditions={
                "StringEquals": {"kms:ViaService": f"s3.{Stack.of(self).region}.amazonaws.com"}
            },
        )

    def allow_start(self, starter: iam.IRole) -> iam.Role:
        """The build data role, trusted by ``starter`` (the role that starts builds) and
        by no one else; ``starter`` may assume it. Its own policy is the most a build's
        output POST can ever do (put any staging archive, with the bucket's key through
        S3); every session narrows it to one build's archive."""
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
            description="zerocode build data: signs each build's output POST, "
            "scoped per build by a session policy",
        )
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["s3:PutObject"], resources=[self.bucket.arn_for_objects(f"{STAGING}*")]
            )
        )
        role.add_to_policy(self._key_through_s3("kms:GenerateDataKey"))
        role.grant_assume_role(starter)
        suppress(
            role,
            "IAM5",
            "The build data role puts staging archives under their "
            "prefix; each build's session policy narrows it to that "
            "build's own archive.",
            children=True,
            applies_to=[objects(self.bucket, STAGING)],
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

"""The build image: a CDK asset, copied into a repository of its own, run by its digest.

CDK pushes image assets to the bootstrap's one repository, which holds every image asset of
every CDK app deployed in the account and region; a role that may pull from it may pull them
all. So at deploy time the build image is copied (cdk-ecr-deployment's function, under a
role of ours that may pull from that repository and push to this one, nothing else) into a
repository holding nothing but build images: immutable tags, scanned on push, the last
:data:`KEPT_IMAGES` kept. The CodeBuild project names the image by the digest read back
after the copy, so a build runs exactly the image this deploy made, never a tag that moved
(issue 42, point 5; docs/builds.md, "The build image").
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_ecr as ecr
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_iam as iam
from aws_cdk import custom_resources as cr
from cdk_ecr_deployment import DockerImageName, ECRDeployment
from constructs import Construct

from zerocode_infra.nag import (
    CUSTOM_RESOURCE_SKIPS,
    explain_custom_resource_function,
    managed_policy,
    skip_checkov,
    suppress,
)
from zerocode_infra.packaging import ASSET_EXCLUDE, LAYER_SOURCE

# The build image's Docker context is the core layer's Python tree (the in-box program
# ``zerocode.buildbox`` and the toolchain's lockfile are in the package), its Dockerfile
# the package's own. Lambda refuses multi-architecture images: one platform, Arm.
BUILDBOX_CONTEXT = LAYER_SOURCE / "python"
BUILDBOX_DOCKERFILE = "zerocode/buildbox/Dockerfile"
BUILDBOX_EXCLUDE = [*ASSET_EXCLUDE, "**/node_modules", "**/.mypy_cache", "**/.ruff_cache"]
KEPT_IMAGES = 10  # a rollback's image is still there; older ones go
DIGEST = "imageDetails.0.imageDigest"
COPIER_PURPOSE = "Custom::CDKECRDeployment"  # cdk-ecr-deployment's singleton function


class BuildImage(Construct):
    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        # Built and pushed by `cdk deploy` (to the bootstrap's repository); synth only
        # fingerprints the directory, so it needs no Docker.
        self.asset = ecr_assets.DockerImageAsset(
            self,
            "Asset",
            directory=str(BUILDBOX_CONTEXT),
            file=BUILDBOX_DOCKERFILE,
            platform=ecr_assets.Platform.LINUX_ARM64,
            exclude=BUILDBOX_EXCLUDE,
        )
        self.repository = ecr.Repository(
            self,
            "Repository",
            image_tag_mutability=ecr.TagMutability.IMMUTABLE,
            image_scan_on_push=True,
            encryption=ecr.RepositoryEncryption.KMS,
            lifecycle_rules=[
                ecr.LifecycleRule(
                    description=f"keep the last {KEPT_IMAGES} build images",
                    max_image_count=KEPT_IMAGES,
                )
            ],
            # Every image in it is made again from the source by a deploy: it goes with the
            # stack, images and all, in every profile (nothing to keep for a redeploy).
            removal_policy=RemovalPolicy.DESTROY,
            empty_on_delete=True,
        )
        copied = self._copy()
        call = cr.AwsSdkCall(
            service="ECR",
            action="describeImages",
            parameters={
                "repositoryName": self.repository.repository_name,
                "imageIds": [{"imageTag": self.asset.asset_hash}],
            },
            physical_resource_id=cr.PhysicalResourceId.from_response(DIGEST),
            output_paths=[DIGEST],
        )
        digest = cr.AwsCustomResource(
            self,
            "Digest",
            on_create=call,
            on_update=call,
            policy=cr.AwsCustomResourcePolicy.from_statements(
                [
                    iam.PolicyStatement(
                        actions=["ecr:DescribeImages"],
                        resources=[self.repository.repository_arn],
                    )
                ]
            ),
            install_latest_aws_sdk=False,
        )
        digest.node.add_dependency(copied)
        explain_custom_resource_function(self)
        # What the project runs: the image this deploy copied, by digest.
        self.image_id = f"{self.repository.repository_uri}@{digest.get_response_field(DIGEST)}"

    def _copy(self) -> ECRDeployment:
        """The asset's image into the repository, tagged with the asset's hash, by a
        function whose role pulls from the bootstrap's repository and pushes to this one."""
        role = iam.Role(
            self,
            "CopyRole",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="zerocode: copies the build image into its own repository at deploy",
            managed_policies=[
                iam.ManagedPolicy.from_aws_managed_policy_name(
                    "service-role/AWSLambdaBasicExecutionRole"
                )
            ],
        )
        self.asset.repository.grant_pull(role)
        self.repository.grant_pull_push(role)
        copied = ECRDeployment(
            self,
            "Copy",
            src=DockerImageName(self.asset.image_uri),
            dest=DockerImageName(f"{self.repository.repository_uri}:{self.asset.asset_hash}"),
            # Its own statements (every repository, every S3 object) are not added: the
            # role takes no policy updates from it.
            role=role.without_policy_updates(),
        )
        suppress(
            role,
            "IAM4",
            "The image copy function writes its logs by the AWS managed basic execution "
            "policy; it pulls one repository and pushes to one other, at deploy time only.",
            applies_to=[managed_policy("service-role/AWSLambdaBasicExecutionRole")],
        )
        suppress(
            role,
            "IAM5",
            "ECR's GetAuthorizationToken takes no resource by AWS design; the image copy "
            "function's pulls and pushes name the two repositories.",
            children=True,
            applies_to=["Resource::*"],
        )
        # The copier is a singleton function at the stack's root, named after its purpose.
        (function,) = [
            c.node.default_child
            for c in Stack.of(self).node.children
            if c.node.id.startswith(COPIER_PURPOSE)
        ]
        assert function is not None
        for check, reason in CUSTOM_RESOURCE_SKIPS.items():
            skip_checkov(function, check, reason)
        return copied

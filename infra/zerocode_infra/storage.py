"""Private S3 buckets: workspaces, transcript payloads, builds, the console, access logs, and
the sites distribution's logs, kept only until their visits are counted (``VISIT_LOGS``).

All block public access, refuse plain HTTP, are encrypted and abort incomplete multipart
uploads after a day. The workspaces bucket (every app's files and ``versions/``) and the
payloads bucket (the transcript's large tool results) are versioned: an overwritten or
deleted object stays recoverable for ``NONCURRENT_DAYS`` and then expires
(docs/security.md, "Deleted data"). The builds bucket uses a
customer-managed KMS key: CloudFront (Origin Access Control) can only read SSE-KMS objects
whose key policy lets it, which an AWS-managed key never does. The other buckets use
S3-managed keys. The builds key is the builds bucket's alone (the model API key's secret has
a key of its own, ``model_key``); roles use it only through S3 (``keys.only_through``).

The builds bucket holds ``sources/`` (a build's source zip, deleted by the build once read),
``staging/`` (the one archive a build puts, unpacked by build_events or the API's poller),
``builds/`` (the unpacked sites, served), ``checks/`` (the in-build runtime check results,
private) and ``preview-covers/`` (a preview build's screenshot, its app's private cover until
it has a deploy's; read only by the API). A source or staging object left behind by a failed
build expires after a day. A preview build's site and check result are written tagged
``PREVIEW_TAG`` and expire ``previewOutputDays`` after they were written (docs/operations.md,
"Preview outputs expire"); deploy builds are never tagged, so every published build and every
build a rollback may name stays.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from zerocode_infra.nag import skip_checkov, suppress

# Key prefixes the platform uses (zerocode.adapters.*): the IAM grants are scoped to them.
WORKSPACES = "workspaces/"
VERSIONS = "versions/"  # every version's manifest and contents (zerocode.apps.versions)
PAYLOADS = "transcript/"
SOURCES = "sources/"  # sources/{app}/{build}.zip, read by its build (presigned GET)
STAGING = "staging/"  # staging/{app}/{build}.tar, put by its build (presigned PUT)
BUILDS = "builds/"  # builds/{app}/{build}/..., the unpacked site
CHECKS = "checks/"  # checks/{app}/{build}.json, the build's runtime check
# preview-covers/{app}/{build}.png (zerocode.adapters.aws.s3_preview_covers): not builds/
PREVIEW_COVERS = "preview-covers/"
# The npm cache prefix: no longer written (builds run an image with the toolchain
# installed); a lifecycle rule expires what earlier deployments left there.
CACHE = "cache"
# A build's source and staging objects are needed for at most one build (15 minutes).
LEFTOVER_DAYS = 1
# How long an overwritten or deleted workspace object stays recoverable (versioning).
NONCURRENT_DAYS = 30
# CloudFront's standard logs of the sites distribution (zerocode.publishing.visit_logs): under
# this prefix of the visit logs bucket, counted and deleted by functions/visit_logs, and
# expired by the lifecycle after VISIT_LOG_DAYS whatever befell them (they hold addresses).
VISIT_LOGS = "sites/"
VISIT_LOG_DAYS = 1
# The tag a preview build's objects carry (zerocode.adapters.aws.codebuild_builder, which a
# test keeps equal): the lifecycle rule "PreviewOutputs" expires them.
PREVIEW_TAG = ("zerocode:purpose", "preview")


class Storage(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        removal_policy: RemovalPolicy,
        preview_output_days: int,
    ) -> None:
        super().__init__(scope, id)
        self.removal_policy = removal_policy
        self.key = kms.Key(
            self,
            "Key",
            enable_key_rotation=True,
            removal_policy=removal_policy,
            description="zerocode: the builds bucket (sites, sources, staging, checks, covers)",
        )
        # Server access logs and CloudFront standard logs. CloudFront still delivers its
        # logs with an ACL grant, so this bucket keeps ACLs (owner preferred).
        self.logs = s3.Bucket(
            self,
            "Logs",
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
            removal_policy=removal_policy,
            lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(90))],
        )
        suppress(
            self.logs,
            "S1",
            "This is the access log bucket itself; logging its own "
            "accesses into itself would create a log loop.",
        )
        skip_checkov(
            self.logs,
            "CKV_AWS_18",
            "This is the access log bucket itself; logging its own accesses into itself "
            "would create a log loop.",
        )
        skip_checkov(
            self.logs,
            "CKV_AWS_21",
            "Access logs are written once, never overwritten, and expire after 90 days; "
            "versioning would only keep the log objects the lifecycle rule deletes.",
        )
        self.visit_logs = self._visit_logs_bucket()
        self.workspaces = self._bucket(
            "Workspaces",
            versioned=True,
            lifecycle_rules=list(_old_versions_expire()),
        )
        # Transcript payloads (a tool result too large for a table item) are the
        # transcript: kept like the workspaces, recoverable for NONCURRENT_DAYS.
        self.payloads = self._bucket(
            "Payloads", versioned=True, lifecycle_rules=list(_old_versions_expire())
        )
        self.console = self._bucket("Console")
        skip_checkov(
            self.console,
            "CKV_AWS_21",
            "The console bucket holds the built web console, uploaded again from the "
            "repository on every release; an old bundle is restored from git, not S3.",
        )
        self.builds = self._bucket(
            "Builds",
            key=self.key,
            lifecycle_rules=[
                # A source zip is read (and deleted) by its own build, a staging archive
                # unpacked (and deleted) once the build ends: what is left is a failure's.
                *(
                    s3.LifecycleRule(id=id, prefix=prefix, expiration=Duration.days(LEFTOVER_DAYS))
                    for id, prefix in (
                        ("Sources", SOURCES),
                        ("Staging", STAGING),
                        ("OldNpmCache", f"{CACHE}/"),
                    )
                ),
                # Preview outputs (sites and checks): a newer turn replaces them, and the
                # preview sweep stops naming them long before this (config.py).
                s3.LifecycleRule(
                    id="PreviewOutputs",
                    tag_filters=dict([PREVIEW_TAG]),
                    expiration=Duration.days(preview_output_days),
                ),
            ],
        )
        skip_checkov(
            self.builds,
            "CKV_AWS_21",
            "Build outputs are written once under a new build id and never overwritten, and "
            "a deleted app's builds and expired previews must go for good: versioning would "
            "keep them as noncurrent versions.",
        )

    def _visit_logs_bucket(self) -> s3.Bucket:
        """The sites distribution's standard logs (issue 44: its visits are counted from
        them). They hold viewers' addresses, so each file is deleted once counted and none
        stays past a day; CloudFront delivers with an ACL grant (owner preferred). A new file
        is told to EventBridge (the visit logs function's rule): S3's own notifications would
        need CDK's notification custom resource, a Lambda function of its own."""
        bucket = s3.Bucket(
            self,
            "VisitLogs",
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
            server_access_logs_bucket=self.logs,
            server_access_logs_prefix="s3/visitlogs/",
            removal_policy=self.removal_policy,
            lifecycle_rules=[
                s3.LifecycleRule(id="VisitLogs", expiration=Duration.days(VISIT_LOG_DAYS)),
                s3.LifecycleRule(
                    id="IncompleteUploads",
                    abort_incomplete_multipart_upload_after=Duration.days(1),
                ),
            ],
        )
        cfn = bucket.node.default_child
        assert isinstance(cfn, s3.CfnBucket)
        cfn.add_property_override(
            "NotificationConfiguration.EventBridgeConfiguration.EventBridgeEnabled", value=True
        )
        skip_checkov(
            bucket,
            "CKV_AWS_21",
            "CloudFront writes each log file once and the visit logs function deletes it once "
            "counted; versioning would keep the viewers' addresses the deletion must remove.",
        )
        return bucket

    def _bucket(
        self,
        id: str,
        *,
        key: kms.IKey | None = None,
        lifecycle_rules: list[s3.LifecycleRule] | None = None,
        versioned: bool = False,
    ) -> s3.Bucket:
        encryption = s3.BucketEncryption.KMS if key else s3.BucketEncryption.S3_MANAGED
        return s3.Bucket(
            self,
            id,
            encryption=encryption,
            encryption_key=key,
            bucket_key_enabled=bool(key),
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            server_access_logs_bucket=self.logs,
            server_access_logs_prefix=f"s3/{id.lower()}/",
            removal_policy=self.removal_policy,
            versioned=versioned,
            lifecycle_rules=[
                s3.LifecycleRule(
                    id="IncompleteUploads",
                    abort_incomplete_multipart_upload_after=Duration.days(1),
                ),
                *(lifecycle_rules or []),
            ],
        )


def _old_versions_expire() -> tuple[s3.LifecycleRule, ...]:
    """A versioned bucket's old versions expire after ``NONCURRENT_DAYS``; once a deleted
    object's old versions are gone, its delete marker goes too."""
    return (
        s3.LifecycleRule(
            id="OldVersions", noncurrent_version_expiration=Duration.days(NONCURRENT_DAYS)
        ),
        s3.LifecycleRule(id="DeleteMarkers", expired_object_delete_marker=True),
    )


# What CDK's bucket grants give to read and to write (aws-cdk-lib's s3 perms), and to use
# the bucket's key for both; only its deletes differ (see grant_objects).
READ_ACTIONS = ["s3:GetObject*", "s3:GetBucket*", "s3:List*"]
PUT_ACTIONS = [
    "s3:PutObject",
    "s3:PutObjectLegalHold",
    "s3:PutObjectRetention",
    "s3:PutObjectTagging",
    "s3:PutObjectVersionTagging",
    "s3:Abort*",
]
KEY_ACTIONS = [
    "kms:Decrypt",
    "kms:DescribeKey",
    "kms:Encrypt",
    "kms:ReEncrypt*",
    "kms:GenerateDataKey*",
]


def grant_objects(
    grantee: iam.IGrantable, bucket: s3.IBucket, prefix: str, *, untag: bool = False
) -> None:
    """Read, write and delete the current objects under ``prefix``: CDK's
    ``grant_read_write`` (one statement, the same read and write actions, the bucket's key)
    but for its ``s3:DeleteObject*``, which includes ``DeleteObjectVersion``. No code
    deletes a version, and in a versioned bucket the noncurrent version is how a mistaken
    delete is undone (the lifecycle expires it), so a role gets ``s3:DeleteObject`` alone;
    ``untag``: and ``s3:DeleteObjectTagging`` (a preview's expiry tag taken off)."""
    deletes = ["s3:DeleteObject", *(["s3:DeleteObjectTagging"] if untag else [])]
    iam.Grant.add_to_principal(
        grantee=grantee,
        actions=[*READ_ACTIONS, *PUT_ACTIONS, *deletes],
        resource_arns=[bucket.bucket_arn, bucket.arn_for_objects(f"{prefix}*")],
    )
    if bucket.encryption_key is not None:
        bucket.encryption_key.grant(grantee, *KEY_ACTIONS)


def grant_object_deletes(grantee: iam.IGrantable, bucket: s3.IBucket, prefix: str) -> None:
    """``s3:DeleteObject`` under ``prefix``: never a version's delete (see
    :func:`grant_objects`)."""
    iam.Grant.add_to_principal(
        grantee=grantee,
        actions=["s3:DeleteObject"],
        resource_arns=[bucket.arn_for_objects(f"{prefix}*")],
    )

"""DynamoDB tables, with the key schemas the adapters in ``zerocode.adapters`` use.

No users table: on AWS, accounts live in the Cognito user pool (``auth.py``). Every table
is on-demand, has point-in-time recovery (all but the turn-events table), expires items by
``expires_at`` (the adapters write it when retention is on; leases, rate-limit logs and turn
events always) and is encrypted.

The turn-events table (turns' event logs, ``zerocode.adapters.dynamodb.turn_log``) exists
only where there is no cache: with ElastiCache (the default profile) the logs are Redis
Streams there. It is not in :attr:`Tables.all`, so only the function given it (the API)
knows its name or may touch it, and it has no point-in-time recovery: a log is kept a day.
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_dynamodb as ddb
from constructs import Construct

from zerocode_infra.nag import skip_checkov, suppress

TTL_ATTRIBUTE = "expires_at"
S, N = ddb.AttributeType.STRING, ddb.AttributeType.NUMBER


# checkov CKV_AWS_119 (a customer-managed key): why the AWS managed key is enough.
AWS_MANAGED_KEY = (
    "The table is encrypted at rest with the AWS managed DynamoDB key, logged in "
    "CloudTrail; a key of our own per table would cost a dollar a month each and add "
    "KMS to every read's path while IAM already decides who reads what."
)


class Tables(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        removal_policy: RemovalPolicy,
        turn_events: bool = False,
    ) -> None:
        """``turn_events``: the stack has no cache (the cheap profile), so turns' event logs
        need a table (:attr:`turn_events`, else None)."""
        super().__init__(scope, id)
        self.removal_policy = removal_policy
        self.transcript = self._table("Transcript", ("app_id", S), ("seq", N))
        self.display = self._table("Display", ("app_id", S), ("id", S))
        self.apps = self._table("Apps", ("id", S))
        self.builds = self._table("Builds", ("app_id", S), ("id", S))
        # Leases ("turn:{appId}") and, without Redis, rate-limit logs share this table.
        self.leases = self._table("Leases", ("key", S))
        self.deletions = self._table("Deletions", ("app_id", S))
        # Each app's acceptance checks, their runs, screenshots and deploy stamps, told apart
        # by a typed sort key (zerocode.adapters.dynamodb.checks.create_checks_table).
        self.checks = self._table("Checks", ("app_id", S), ("sk", S))
        # The apps' own data: records, end users, sessions and build models, one partition
        # per app and space (zerocode.adapters.dynamodb.app_data, which says the keys), with
        # two local indexes (creation order; an owner's records in creation order), read
        # strongly consistent. Sessions and check scratch spaces expire by expires_at.
        self.app_data = self._table("AppData", ("scope", S), ("key", S))
        for name, sort_key in (("by_time", "ct"), ("by_owner", "ot")):
            self.app_data.add_local_secondary_index(
                index_name=name,
                sort_key=ddb.Attribute(name=sort_key, type=S),
                projection_type=ddb.ProjectionType.ALL,
            )
        # The apps table's indexes (zerocode.adapters.dynamodb.apps.create_apps_table, which
        # says why each projects what it does). ``all_apps``, the one-key index the sharded
        # one replaces, stays until every item is backfilled (docs/operations.md, "The apps
        # table's indexes"): CloudFormation adds or removes one index per update, and a
        # changed index is both. No item written since carries its key, so it takes no
        # writes; the release after the backfill deletes it.
        for name, hash_key, range_key, included in (
            ("by_owner", "owner", "created_key", None),
            ("by_preview_key", "preview_key", None, None),
            ("featured", "featured_pk", "featured_key", None),
            ("all_apps", "all_pk", "created_key", None),
            ("all_apps_sharded", "all_shard", "created_key", ["name_lower"]),
        ):
            self.apps.add_global_secondary_index(
                index_name=name,
                partition_key=ddb.Attribute(name=hash_key, type=S),
                sort_key=ddb.Attribute(name=range_key, type=S) if range_key else None,
                projection_type=(
                    ddb.ProjectionType.INCLUDE if included else ddb.ProjectionType.ALL
                ),
                non_key_attributes=included,
            )
        # The usage ledger (zerocode.adapters.dynamodb.usage, which says the keys): each
        # model request, and the days of each app and account. Not in :attr:`all`: the API
        # writes it and the deletion sweep deletes an app's part, nothing else reads it.
        self.usage = self._table("Usage", ("pk", S), ("sk", S))
        # The published sites' visits (zerocode.adapters.dynamodb.visits, which says the
        # keys): per app and day the counters, per day the salt, per app and day the hashes
        # of the visitors counted (expiring with the salt). Not in :attr:`all`: the visit
        # logs function writes it, the API reads it, both (and the sweep) delete an app's.
        self.visits = self._table("Visits", ("pk", S), ("sk", S))
        # Turns' event logs ("{appId}#{turn}", seq), when there is no cache to keep them
        # (zerocode.adapters.dynamodb.turn_log.create_turn_events_table). No point-in-time
        # recovery, unlike the others: a log serves the readers of a running turn and its
        # entries expire a day after they are written.
        self.turn_events: ddb.Table | None = None
        if turn_events:
            self.turn_events = self._table(
                "TurnEvents", ("turn", S), ("seq", N), point_in_time_recovery=False
            )
            no_recovery = (
                "Turns' event logs serve the readers of running turns and expire a day after "
                "they are written, so point-in-time recovery would restore nothing anyone reads."
            )
            suppress(self.turn_events, "DDB3", no_recovery)
            skip_checkov(self.turn_events, "CKV_AWS_28", no_recovery)

    @property
    def all(self) -> dict[str, ddb.Table]:
        """By the settings name they configure (``ZEROCODE_{NAME}_TABLE``): the tables every
        function is told about. Not :attr:`turn_events`, which only the API uses."""
        return {
            "transcript": self.transcript,
            "display": self.display,
            "apps": self.apps,
            "builds": self.builds,
            "leases": self.leases,
            "deletions": self.deletions,
            "checks": self.checks,
            "app_data": self.app_data,
        }

    def _table(
        self,
        id: str,
        partition: tuple[str, ddb.AttributeType],
        sort: tuple[str, ddb.AttributeType] | None = None,
        *,
        point_in_time_recovery: bool = True,
    ) -> ddb.Table:
        table = ddb.Table(
            self,
            id,
            partition_key=ddb.Attribute(name=partition[0], type=partition[1]),
            sort_key=ddb.Attribute(name=sort[0], type=sort[1]) if sort else None,
            billing_mode=ddb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=ddb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=point_in_time_recovery
            ),
            time_to_live_attribute=TTL_ATTRIBUTE,
            encryption=ddb.TableEncryption.AWS_MANAGED,
            deletion_protection=self.removal_policy == RemovalPolicy.RETAIN,
            removal_policy=self.removal_policy,
        )
        skip_checkov(table, "CKV_AWS_119", AWS_MANAGED_KEY)
        return table

"""Alarms and one dashboard for what an operator needs to notice.

API 5xx, function errors and throttles, slow turns (the ``TurnDuration`` metric the API
writes as CloudWatch EMF, namespace ``zerocode``, dimension ``service=zerocode``), failed
CodeBuild builds, build events that landed in the failed-events queue, and the site pointer
store nearing its 5 MB (``SitePointerBytes``, written daily by the preview sweep). The
alarms have no actions: subscribe an SNS topic or a chat integration to them
(docs/operations.md).
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_codebuild as codebuild
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import Construct

FIVE_MINUTES = Duration.minutes(5)
TURN_DURATION = cw.Metric(
    namespace="zerocode",
    metric_name="TurnDuration",
    dimensions_map={"service": "zerocode"},
    statistic="p90",
    period=FIVE_MINUTES,
    unit=cw.Unit.MILLISECONDS,
)
SLOW_TURN_MS = 600_000  # p90 over 10 minutes: turns are near the 14-minute cut-off
KVS_CEILING_BYTES = 5_000_000  # a KeyValueStore's quota ("5 MB")
SITE_POINTER_BYTES = cw.Metric(
    namespace="zerocode",
    metric_name="SitePointerBytes",
    dimensions_map={"service": "zerocode"},
    statistic="Maximum",
    period=Duration.days(1),
    unit=cw.Unit.BYTES,
)


class Observability(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        api: apigw.RestApi,
        functions: dict[str, lambda_.Function],
        project: codebuild.IProject,
        dashboard_name: str,
        failed_build_events: sqs.IQueue,
    ) -> None:
        super().__init__(scope, id)
        self.alarms: list[cw.Alarm] = []
        api_5xx = api.metric_server_error(period=FIVE_MINUTES, statistic="Sum")
        self._alarm("Api5xx", api_5xx, 5, "API answered 5 or more 5xx in 5 minutes")
        for name, fn in functions.items():
            self._alarm(
                f"{name}Errors", fn.metric_errors(period=FIVE_MINUTES), 1, f"{name} function errors"
            )
            self._alarm(
                f"{name}Throttles",
                fn.metric_throttles(period=FIVE_MINUTES),
                1,
                f"{name} function throttled",
            )
        self._alarm(
            "SlowTurns",
            TURN_DURATION,
            SLOW_TURN_MS,
            "p90 turn duration above 10 minutes",
            strictly=True,
        )
        failed = project.metric_failed_builds(period=Duration.hours(1), statistic="Sum")
        self._alarm("FailedBuilds", failed, 10, "10 or more failed CodeBuild builds in an hour")
        undelivered = failed_build_events.metric_approximate_number_of_messages_visible(
            period=FIVE_MINUTES, statistic="Maximum"
        )
        self._alarm(
            "FailedBuildEvents",
            undelivered,
            1,
            "a build event failed or was not delivered: it waits in the failed-events queue",
        )
        self._alarm(
            "SitePointersNearlyFull",
            SITE_POINTER_BYTES,
            KVS_CEILING_BYTES * 0.8,
            "the site pointer KeyValueStore holds 80% of its 5 MB",
        )
        self.dashboard = cw.Dashboard(
            self,
            "Dashboard",
            dashboard_name=dashboard_name,
            widgets=[
                [
                    cw.GraphWidget(
                        title="API requests and errors",
                        width=12,
                        left=[
                            api.metric_count(period=FIVE_MINUTES, statistic="Sum"),
                            api.metric_client_error(period=FIVE_MINUTES, statistic="Sum"),
                            api_5xx,
                        ],
                    ),
                    cw.GraphWidget(
                        title="API latency p90",
                        width=12,
                        left=[api.metric_latency(period=FIVE_MINUTES, statistic="p90")],
                    ),
                ],
                [
                    cw.GraphWidget(
                        title=f"{name} invocations, errors, throttles",
                        width=12,
                        left=[
                            fn.metric_invocations(period=FIVE_MINUTES),
                            fn.metric_errors(period=FIVE_MINUTES),
                            fn.metric_throttles(period=FIVE_MINUTES),
                        ],
                    )
                    for name, fn in functions.items()
                ],
                [
                    cw.GraphWidget(title="Turn duration p90 (ms)", width=12, left=[TURN_DURATION]),
                    cw.GraphWidget(
                        title="CodeBuild builds",
                        width=12,
                        left=[
                            project.metric_succeeded_builds(
                                period=Duration.hours(1), statistic="Sum"
                            ),
                            failed,
                        ],
                    ),
                ],
                [
                    cw.GraphWidget(
                        title="Site pointer store (bytes of 5 MB)",
                        width=12,
                        left=[SITE_POINTER_BYTES],
                    ),
                    cw.GraphWidget(
                        title="Build events failed or undelivered", width=12, left=[undelivered]
                    ),
                ],
                [cw.AlarmStatusWidget(title="Alarms", width=24, alarms=list(self.alarms))],
            ],
        )

    def _alarm(
        self,
        id: str,
        metric: cw.IMetric,
        threshold: float,
        description: str,
        *,
        strictly: bool = False,
    ) -> None:
        operator = (
            cw.ComparisonOperator.GREATER_THAN_THRESHOLD
            if strictly
            else cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
        )
        self.alarms.append(
            cw.Alarm(
                self,
                id,
                metric=metric,
                threshold=threshold,
                evaluation_periods=1,
                comparison_operator=operator,
                alarm_description=f"zerocode: {description}",
                treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
            )
        )

"""The VPC the functions run in, and the window cache (ElastiCache Serverless, Valkey).

Functions sit in private subnets; the NAT gateway(s) carry their calls to Cognito,
CodeBuild, Secrets Manager, the KeyValueStore and the model endpoint, while S3 and
DynamoDB go through free gateway endpoints. The cache accepts port 6379 from the
functions' security group and nothing else; a serverless cache always encrypts at rest
and in transit (clients connect with ``rediss://``).
"""

from __future__ import annotations

from aws_cdk import Fn, RemovalPolicy
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_elasticache as elasticache
from constructs import Construct

from zerocode_infra.log_groups import log_group

REDIS_PORT = 6379


class Network(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        nat_gateways: int,
        removal_policy: RemovalPolicy,
        cache_name: str,
    ) -> None:
        super().__init__(scope, id)
        flow_logs = log_group(self, "FlowLogs", removal_policy=removal_policy)
        # Two AZs: the serverless cache needs subnets in at least two.
        self.vpc = ec2.Vpc(
            self,
            "Vpc",
            max_azs=2,
            nat_gateways=nat_gateways,
            subnet_configuration=[
                ec2.SubnetConfiguration(
                    name="public", subnet_type=ec2.SubnetType.PUBLIC, cidr_mask=24
                ),
                ec2.SubnetConfiguration(
                    name="private", cidr_mask=22, subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS
                ),
            ],
            gateway_endpoints={
                "S3": ec2.GatewayVpcEndpointOptions(service=ec2.GatewayVpcEndpointAwsService.S3),
                "DynamoDB": ec2.GatewayVpcEndpointOptions(
                    service=ec2.GatewayVpcEndpointAwsService.DYNAMODB
                ),
            },
            flow_logs={
                "All": ec2.FlowLogOptions(
                    destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_logs)
                )
            },
        )
        self.subnets = ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS)
        self.functions_sg = ec2.SecurityGroup(
            self,
            "FunctionsSg",
            vpc=self.vpc,
            allow_all_outbound=True,
            description="zerocode Lambda functions",
        )
        self.cache_sg = ec2.SecurityGroup(
            self,
            "CacheSg",
            vpc=self.vpc,
            allow_all_outbound=False,
            description="zerocode window cache: Valkey from the functions only",
        )
        self.cache_sg.add_ingress_rule(
            self.functions_sg, ec2.Port.tcp(REDIS_PORT), "Valkey from the zerocode functions"
        )
        self.cache = elasticache.CfnServerlessCache(
            self,
            "Cache",
            engine="valkey",
            major_engine_version="8",
            serverless_cache_name=cache_name,
            description="zerocode window cache and rate limits",
            security_group_ids=[self.cache_sg.security_group_id],
            subnet_ids=self.vpc.select_subnets(
                subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS
            ).subnet_ids,
            # A ceiling on what a runaway client could cost; the cache holds window tails.
            cache_usage_limits=elasticache.CfnServerlessCache.CacheUsageLimitsProperty(
                data_storage=elasticache.CfnServerlessCache.DataStorageProperty(
                    unit="GB", maximum=5
                )
            ),
        )
        # Always deleted with the stack: it holds nothing the tables do not (M3).

    @property
    def redis_url(self) -> str:
        return Fn.join(
            "", ["rediss://", self.cache.attr_endpoint_address, ":", self.cache.attr_endpoint_port]
        )

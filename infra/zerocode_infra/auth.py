"""Accounts on AWS: a Cognito user pool and the app client the platform signs users in with.

Only the platform creates users (``AdminCreateUser`` with a permanent password, see
``zerocode.adapters.aws.cognito_accounts``): the pool's self sign-up is off, so the public
client id cannot be used to sign up past the platform's rules and throttles. It signs users
in with ``USER_PASSWORD_AUTH`` and hands out Cognito *access* tokens; the API Gateway
authorizer accepts exactly those (scope ``aws.cognito.signin.user.admin``). The app client
allows that flow and refresh tokens and nothing else: no OAuth flows, no hosted UI, no
callback URLs. Password rules match local mode: 8 characters or more.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_cognito as cognito
from constructs import Construct

from zerocode_infra.nag import suppress

ADMIN_GROUP = "admin"
ACCESS_TOKEN_SCOPE = "aws.cognito.signin.user.admin"


class Auth(Construct):
    def __init__(self, scope: Construct, id: str, *, removal_policy: RemovalPolicy) -> None:
        super().__init__(scope, id)
        self.pool = cognito.UserPool(
            self,
            "Users",
            self_sign_up_enabled=False,  # AllowAdminCreateUserOnly: the API registers users
            sign_in_case_sensitive=False,
            sign_in_aliases=cognito.SignInAliases(username=True),
            standard_attributes=cognito.StandardAttributes(
                fullname=cognito.StandardAttribute(required=False, mutable=True)
            ),
            password_policy=cognito.PasswordPolicy(
                min_length=8,
                require_lowercase=False,
                require_uppercase=False,
                require_digits=False,
                require_symbols=False,
            ),
            account_recovery=cognito.AccountRecovery.NONE,
            feature_plan=cognito.FeaturePlan.ESSENTIALS,
            deletion_protection=removal_policy == RemovalPolicy.RETAIN,
            removal_policy=removal_policy,
        )
        self.client = self.pool.add_client(
            "Platform",
            generate_secret=False,
            prevent_user_existence_errors=True,
            auth_flows=cognito.AuthFlow(user_password=True),  # and refresh tokens, always
            disable_o_auth=True,  # no implicit or code grant, no hosted UI, no callback URLs
            enable_token_revocation=True,  # GlobalSignOut revokes (docs/accounts.md)
            access_token_validity=Duration.hours(1),
            id_token_validity=Duration.hours(1),
            refresh_token_validity=Duration.days(30),
        )
        cognito.UserPoolGroup(
            self,
            "Admins",
            user_pool=self.pool,
            group_name=ADMIN_GROUP,
            description="zerocode administrators",
        )
        suppress(
            self.pool,
            "COG1",
            "Passwords follow the platform's own rule, eight or more "
            "characters, so local and AWS accounts accept the same "
            "passwords; length beats composition rules (NIST 800-63B).",
        )
        suppress(
            self.pool,
            "COG2",
            "The platform signs users in with USER_PASSWORD_AUTH and "
            "has no MFA step in its login API yet; MFA is a later "
            "feature of the product.",
        )
        suppress(
            self.pool,
            "COG3",
            "Threat protection needs the Cognito Plus feature plan, "
            "a per-user cost an operator can opt into; Cognito's own "
            "lockout still throttles password guessing.",
        )
        suppress(
            self.pool,
            "COG8",
            "The Plus feature plan adds a per-user monthly cost for "
            "threat protection the platform does not use yet; the "
            "Essentials plan covers its sign-up and sign-in.",
        )

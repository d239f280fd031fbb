"""The API actions the functions' roles name, each list exactly what the code calls."""

from __future__ import annotations

# The site pointer store (zerocode.adapters.aws.cloudfront_publisher): read, write, remove.
KVS_ACTIONS = [
    "cloudfront-keyvaluestore:DescribeKeyValueStore",
    "cloudfront-keyvaluestore:GetKey",
    "cloudfront-keyvaluestore:PutKey",
    "cloudfront-keyvaluestore:DeleteKey",
]
# The preview sweep walks the store and removes stale preview pointers; it writes none.
PREVIEW_SWEEP_KVS_ACTIONS = [
    "cloudfront-keyvaluestore:DescribeKeyValueStore",
    "cloudfront-keyvaluestore:ListKeys",
    "cloudfront-keyvaluestore:GetKey",
    "cloudfront-keyvaluestore:DeleteKey",
]
# What zerocode.adapters.dynamodb.turn_log calls on the turn-events table (the cheap
# profile's turn logs): no Scan, no UpdateItem, no BatchGetItem.
TURN_EVENTS_ACTIONS = [
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:DeleteItem",
]
# What zerocode.adapters.aws.cognito_accounts calls with IAM credentials (InitiateAuth, GetUser
# and GlobalSignOut are authorized by the client id or the user's own token). Users are
# created with AdminCreateUser and AdminSetUserPassword (the pool allows no self sign-up);
# AdminDeleteUser undoes a creation whose password could not be set.
COGNITO_ACTIONS = [
    "cognito-idp:AdminCreateUser",
    "cognito-idp:AdminSetUserPassword",
    "cognito-idp:AdminDeleteUser",
    "cognito-idp:AdminAddUserToGroup",
    "cognito-idp:AdminGetUser",
    "cognito-idp:AdminListGroupsForUser",
    "cognito-idp:ListUsers",
    "cognito-idp:ListUsersInGroup",
    "cognito-idp:CreateGroup",
]

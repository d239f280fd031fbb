"""Builds, site pointers, the publishing service and the preview picker (docs/builds.md); the
platform's build toolchain.
"""

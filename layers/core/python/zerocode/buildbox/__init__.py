"""The program inside an AWS build: fetch, build, check, cover, hand back.

It runs in the platform's build image (``Dockerfile`` here) on CodeBuild's Lambda compute, as
a non-root user, writing only under ``/tmp``, with no AWS credentials: the build's record
holds one presigned GET of its own source zip, and the zip holds the presigned DELETE of
itself and the presigned PUT of the build's one output archive
(:mod:`zerocode.adapters.aws.build_handoff`). What it does, in order:

1. download the source zip, delete it (the record's link is dead from then on) and unpack it
   into a fresh directory under ``/tmp``;
2. a Vue project: link the image's toolchain (installed from the platform's lockfile when the
   image was made; the zip's copy of the lockfile must match it) and run ``vite build`` with
   an environment holding nothing but ``PATH`` and a home; html and multi-file apps: copy
   the files; a preview gets the element picker;
3. serve the output on loopback and open it in the image's Chromium, confined to that
   origin as the local runtime check is (:func:`zerocode.adapters.local.chromium_check.
   inspect`), the browser's own traffic sent to a proxy that does not exist; record the
   problems (``check.json``) and a screenshot (``cover.png``: a deploy's goes with its
   site, a preview's is kept privately by the platform);
4. send ``out/`` (site, check, cover, log tail) as one tar by the presigned PUT.

The exit status is the build's: 0 when the site was built and handed back.
"""

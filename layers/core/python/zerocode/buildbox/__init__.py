"""The program inside an AWS build: fetch, build, check, cover, hand back.

It runs in the platform's build image (``Dockerfile`` here) on CodeBuild's Lambda compute, as
a non-root user, writing only under ``/tmp``. No link is in the build's record: the box
reads its source zip as its own role session from that session's own prefix, which no other
run can read, and the zip holds the size-bounded presigned POST of the build's one output
archive (:mod:`zerocode.adapters.aws.build_handoff`). What it does, in order:

1. ask STS who it is, download its source zip (:mod:`.own_source`), delete it, and unpack it
   into a fresh directory under ``/tmp``; then drop every AWS variable from its environment,
   so nothing it starts inherits the run's credentials;
2. a Vue project: link the image's toolchain (installed from the platform's lockfile when the
   image was made; the zip's copy of the lockfile must match it) and run ``vite build`` with
   an environment holding nothing but ``PATH`` and a home; html and multi-file apps: copy
   the files; a preview gets the element picker;
3. serve the output on loopback and open it in the image's Chromium, confined to that
   origin as the local runtime check is (:func:`zerocode.adapters.local.chromium_check.
   inspect`), the browser's own traffic sent to a proxy that does not exist; record the
   problems (``check.json``) and a screenshot (``cover.png``: a deploy's goes with its
   site, a preview's is kept privately by the platform); a deploy's page is looked at once
   more for its publish report (``report.json``: :mod:`.box_report`);
4. send ``out/`` (site, check, cover, log tail) as one tar by the presigned POST.

The exit status is the build's: 0 when the site was built and handed back.
"""

#!/usr/bin/env python3
"""Writes a container image tarball in the `docker save` layout from directories.

Each --layer DIR becomes one uncompressed layer whose paths are relative to DIR. The result loads
with `docker load`, `ctr images import`, `kind load image-archive`, and serves Jib as a `tar://`
base. Layers are written reproducibly (sorted names, one fixed mtime, numeric owners only), so the
same inputs give the same digests. Device nodes, fifos and sockets are left out: a container
runtime provides /dev itself.
"""
import argparse
import hashlib
import io
import json
import os
import stat
import sys
import tarfile
import tempfile

FIXED_MTIME = 1  # Jib's convention: one second after the epoch


def _tarinfo(tar, path, arcname):
    info = tar.gettarinfo(path, arcname)
    if info is None:
        return None
    info.mtime = FIXED_MTIME
    info.uname = ""
    info.gname = ""
    return info


def write_layer(src_dir, out_path):
    """Writes src_dir as a layer tar at out_path; returns its sha256 (the diff_id)."""
    with tarfile.open(out_path, "w", format=tarfile.PAX_FORMAT) as tar:
        for root, dirs, files in os.walk(src_dir):
            dirs.sort()
            entries = sorted(dirs + files)
            rel_root = os.path.relpath(root, src_dir)
            for name in entries:
                full = os.path.join(root, name)
                arcname = name if rel_root == "." else os.path.join(rel_root, name)
                mode = os.lstat(full).st_mode
                if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                    continue
                info = _tarinfo(tar, full, arcname)
                if info is None:
                    continue
                if info.isreg():
                    with open(full, "rb") as f:
                        tar.addfile(info, f)
                else:
                    tar.addfile(info)
            # os.walk does not descend into symlinked directories; they were added as links above.
    digest = hashlib.sha256()
    with open(out_path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def write_image(out, tag, layers, config, history):
    work = tempfile.mkdtemp(prefix="image-tar-", dir=os.path.dirname(os.path.abspath(out)))
    try:
        diff_ids = []
        layer_files = []
        for i, layer_dir in enumerate(layers):
            tmp = os.path.join(work, f"layer-{i}.tar")
            hexdigest = write_layer(layer_dir, tmp)
            diff_ids.append("sha256:" + hexdigest)
            layer_files.append((hexdigest, tmp))
        image_config = {
            "architecture": "amd64",
            "os": "linux",
            "created": "1970-01-01T00:00:01Z",
            "config": config,
            "rootfs": {"type": "layers", "diff_ids": diff_ids},
            "history": [{"created": "1970-01-01T00:00:01Z", "created_by": h} for h in history]
            or [{"created": "1970-01-01T00:00:01Z", "created_by": "image-tar.py"}] * len(layers),
        }
        config_bytes = json.dumps(image_config, sort_keys=True, separators=(",", ":")).encode()
        config_hex = hashlib.sha256(config_bytes).hexdigest()
        manifest = [
            {
                "Config": config_hex + ".json",
                "RepoTags": [tag],
                "Layers": [h + "/layer.tar" for h, _ in layer_files],
            }
        ]
        tmp_out = out + ".partial"
        with tarfile.open(tmp_out, "w", format=tarfile.PAX_FORMAT) as tar:

            def add_bytes(name, data):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                info.mtime = FIXED_MTIME
                info.mode = 0o644
                tar.addfile(info, io.BytesIO(data))

            add_bytes(config_hex + ".json", config_bytes)
            for hexdigest, path in layer_files:
                info = tarfile.TarInfo(hexdigest)
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                info.mtime = FIXED_MTIME
                tar.addfile(info)
                info = tar.gettarinfo(path, hexdigest + "/layer.tar")
                info.mtime = FIXED_MTIME
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                with open(path, "rb") as f:
                    tar.addfile(info, f)
            add_bytes("manifest.json", json.dumps(manifest, separators=(",", ":")).encode())
        os.replace(tmp_out, out)
        return config_hex, diff_ids
    finally:
        for name in os.listdir(work):
            os.unlink(os.path.join(work, name))
        os.rmdir(work)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="image tarball to write")
    parser.add_argument("--tag", required=True, help="repository:tag recorded in the tarball")
    parser.add_argument("--layer", action="append", required=True, help="directory: one layer")
    parser.add_argument(
        "--config", required=True, help="JSON of the image's config section (User, Env, ...)"
    )
    parser.add_argument("--history", action="append", default=[], help="one line per layer")
    args = parser.parse_args(argv)
    for d in args.layer:
        if not os.path.isdir(d):
            parser.error(f"--layer {d}: not a directory")
    if args.history and len(args.history) != len(args.layer):
        parser.error("--history must be given once per --layer")
    config_hex, diff_ids = write_image(
        args.out, args.tag, args.layer, json.loads(args.config), args.history
    )
    print(f"{args.out} {args.tag} config sha256:{config_hex} layers {len(diff_ids)}")


if __name__ == "__main__":
    main(sys.argv[1:])

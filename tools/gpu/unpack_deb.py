#!/usr/bin/env python3
"""`dpkg -x DEB DIR` for machines without dpkg: a .deb is an ar archive whose data.tar.* holds
the files. Standard library only (xz and gzip; Debian 12's packages use xz).

    unpack_deb.py DEB DIR
"""

import io
import sys
import tarfile


def members(path):
    with open(path, "rb") as f:
        if f.read(8) != b"!<arch>\n":
            sys.exit(f"{path}: not a .deb (ar) archive")
        while True:
            header = f.read(60)
            if len(header) < 60:
                return
            name = header[:16].decode().strip().rstrip("/")
            size = int(header[48:58])
            yield name, f.read(size)
            f.read(size % 2)  # members are 2-byte aligned


def main():
    deb, target = sys.argv[1], sys.argv[2]
    for name, data in members(deb):
        if name.startswith("data.tar"):
            # The "tar" filter where Python has filters: a package's links stay as they are.
            kwargs = {"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                tar.extractall(target, **kwargs)
            return
    sys.exit(f"{deb}: no data.tar member")


if __name__ == "__main__":
    main()

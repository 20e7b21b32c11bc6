#!/usr/bin/env python3
"""forge_model.py IN OUT FIELD=VALUE... - rewrites a boar model file and
re-computes its CRC, so the tests can hand the loader files whose checksum
is valid but whose contents lie (a NaN weight, a duplicate class label,
softmax on a binary model). Header fields are named as in model_io.c;
w[I]=V sets the I-th float of the payload, class[I]=V the I-th class label.
"""
import struct
import sys
import zlib

FIELDS = ["task", "loss", "hash_bits", "rank", "has_bias", "n_classes"]


def main():
    data = bytearray(open(sys.argv[1], "rb").read())
    body = data[:-8]
    hdr_fields = list(struct.unpack_from("<8sIIIIIIIIQQfI", body, 0))
    n_classes = hdr_fields[8]  # as read, before any edit
    for arg in sys.argv[3:]:
        name, value = arg.split("=", 1)
        if name in FIELDS:
            hdr_fields[3 + FIELDS.index(name)] = int(value, 0)
        elif name == "dim":
            hdr_fields[9] = int(value, 0)
        elif name == "mu":
            hdr_fields[11] = float(value)
        elif name == "flags":
            hdr_fields[12] = int(value, 0)
        elif name.startswith("w["):
            i = int(name[2:-1])
            struct.pack_into("<f", body, 64 + 4 * i, float(value))
        elif name.startswith("class["):
            i = int(name[6:-1])
            dim = hdr_fields[9]
            off = 64 + 4 * ((dim + 1) * n_classes + i)  # after w, K labels
            struct.pack_into("<f", body, off, float(value))
        else:
            sys.exit("forge_model.py: unknown field " + name)
    struct.pack_into("<8sIIIIIIIIQQfI", body, 0, *hdr_fields)
    out = bytes(body) + struct.pack("<I", zlib.crc32(bytes(body))) + b"BEND"
    open(sys.argv[2], "wb").write(out)


main()

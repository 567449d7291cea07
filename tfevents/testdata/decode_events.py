"""Decode a TensorBoard event file independently of gfn's Go code.

The TFRecord framing is read with struct and a CRC-32C written here from
its definition (reflected polynomial 0x82F63B78); each record is parsed
by the protobuf runtime (Debian's python3-protobuf) with the Event and
Summary messages of TensorFlow's published schema
(tensorflow/core/util/event.proto, tensorflow/core/framework/summary.proto),
built with descriptor_pb2 (the fields a scalar event file uses).

Usage: python3 decode_events.py FILE; prints the events as JSON.
"""

import json
import struct
import sys

from google.protobuf import descriptor_pb2, descriptor_pool

try:
    from google.protobuf import message_factory

    def message_class(desc):
        if hasattr(message_factory, "GetMessageClass"):
            return message_factory.GetMessageClass(desc)
        return message_factory.MessageFactory().GetPrototype(desc)
except ImportError:  # pragma: no cover
    raise


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def schema():
    F = descriptor_pb2.FieldDescriptorProto
    fd = descriptor_pb2.FileDescriptorProto()
    fd.name = "gfn_test_event.proto"
    fd.package = "tensorflow"
    fd.syntax = "proto3"

    summary = fd.message_type.add()
    summary.name = "Summary"
    value = summary.nested_type.add()
    value.name = "Value"
    for name, num, typ in [("node_name", 7, F.TYPE_STRING), ("tag", 1, F.TYPE_STRING),
                           ("simple_value", 2, F.TYPE_FLOAT),
                           ("obsolete_old_style_histogram", 3, F.TYPE_BYTES)]:
        f = value.field.add(name=name, number=num, type=typ, label=F.LABEL_OPTIONAL)
        if num in (2, 3):
            f.oneof_index = 0
    value.oneof_decl.add(name="value")
    summary.field.add(name="value", number=1, type=F.TYPE_MESSAGE,
                      label=F.LABEL_REPEATED, type_name=".tensorflow.Summary.Value")

    event = fd.message_type.add()
    event.name = "Event"
    event.field.add(name="wall_time", number=1, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL)
    event.field.add(name="step", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    for name, num, typ, tn in [("file_version", 3, F.TYPE_STRING, None),
                               ("graph_def", 4, F.TYPE_BYTES, None),
                               ("summary", 5, F.TYPE_MESSAGE, ".tensorflow.Summary"),
                               ("meta_graph_def", 9, F.TYPE_BYTES, None)]:
        f = event.field.add(name=name, number=num, type=typ, label=F.LABEL_OPTIONAL, oneof_index=0)
        if tn:
            f.type_name = tn
    event.oneof_decl.add(name="what")

    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return message_class(pool.FindMessageTypeByName("tensorflow.Event"))


def main(path):
    Event = schema()
    data = open(path, "rb").read()
    at, events = 0, []
    while at < len(data):
        if len(data) - at < 12:
            sys.exit("%s: torn header at byte %d" % (path, at))
        head = data[at:at + 8]
        (length,) = struct.unpack("<Q", head)
        (lcrc,) = struct.unpack("<I", data[at + 8:at + 12])
        if lcrc != masked(head):
            sys.exit("%s: length CRC %#x at byte %d, want %#x" % (path, lcrc, at, masked(head)))
        body = data[at + 12:at + 12 + length]
        (dcrc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
        if dcrc != masked(body):
            sys.exit("%s: data CRC %#x at byte %d, want %#x" % (path, dcrc, at, masked(body)))
        at += 16 + length
        e = Event()
        e.ParseFromString(body)
        out = {"wall_time": e.wall_time, "step": e.step, "what": e.WhichOneof("what")}
        if out["what"] == "file_version":
            out["file_version"] = e.file_version
        elif out["what"] == "summary":
            out["values"] = [{"tag": v.tag, "simple_value": v.simple_value,
                              "kind": v.WhichOneof("value")} for v in e.summary.value]
        events.append(out)
    json.dump(events, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])

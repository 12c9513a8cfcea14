"""A small reader of Perfetto protobuf traces for the tests: the protobuf wire format
decoded by hand (no protobuf package), and the TrackEvent packets gpuprof writes turned
into tracks, slices, instants, counters and flows with interned names resolved.

Field numbers are those of Perfetto's public protos (protos/perfetto/trace/): Trace,
TracePacket, TrackDescriptor, TrackEvent, DebugAnnotation, InternedData. The reader
checks what a trace processor relies on: interned ids defined before use on a sequence
whose incremental state was cleared, tracks described before use, and every slice end
closing an open slice of its track."""
import struct


def fields(data):
    """The (field number, value) pairs of one message: ints for varint and fixed64
    fields, bytes for length-delimited ones."""
    out, i = [], 0
    while i < len(data):
        key, i = varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(data, i)
        elif wire == 1:
            value, i = int.from_bytes(data[i:i + 8], "little"), i + 8
        elif wire == 2:
            size, i = varint(data, i)
            value, i = data[i:i + size], i + size
            if i > len(data):
                raise ValueError("length-delimited field runs past its message")
        elif wire == 5:
            value, i = int.from_bytes(data[i:i + 4], "little"), i + 4
        else:
            raise ValueError(f"wire type {wire} in field {number}")
        out.append((number, value))
    return out


def varint(data, i):
    value = shift = 0
    while True:
        if i >= len(data):
            raise ValueError("truncated varint")
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7
        if shift >= 70:
            raise ValueError("varint longer than ten bytes")


def signed(value):
    return value - (1 << 64) if value >= 1 << 63 else value


def one(pairs, number, default=None):
    values = [v for n, v in pairs if n == number]
    assert len(values) <= 1, f"field {number} repeated"
    return values[0] if values else default


def every(pairs, number):
    return [v for n, v in pairs if n == number]


class Trace:
    """A decoded trace: tracks by uuid, slices (with begin and end), instants,
    counter values and flows."""

    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read()
        self.tracks = {}       # uuid -> dict(kind, name, pid, tid, parent, unit)
        self.slices = []       # dict(track, name, category, start, end, args, flows, terminating)
        self.instants = []     # dict(track, name, ts, args)
        self.counters = []     # (track, ts, value)
        self.interned = {1: {}, 2: {}, 3: {}, 29: {}}
        self.sequences_cleared = set()
        open_slices = {}       # track uuid -> stack of slice indexes
        events = []
        for number, packet in fields(data):
            assert number == 1, f"Trace field {number}"
            events.append(self._packet(fields(packet)))
        for kind, payload in events:
            if kind == "begin":
                stack = open_slices.setdefault(payload["track"], [])
                payload["depth"] = len(stack)  # the slices open on its track around it
                stack.append(len(self.slices))
                self.slices.append(payload)
            elif kind == "end":
                stack = open_slices.get(payload["track"])
                assert stack, f"slice end on track {payload['track']} with no slice open"
                s = self.slices[stack.pop()]
                assert payload["ts"] >= s["start"], "slice ends before it begins"
                s["end"] = payload["ts"]
        assert all(not stack for stack in open_slices.values()), "slices left open"

    def _packet(self, p):
        sequence = one(p, 10)
        assert sequence is not None, "packet without a sequence id"
        flags = one(p, 13, 0)
        if flags & 1:
            self.sequences_cleared.add(sequence)
            for table in self.interned.values():
                table.clear()
        interned = one(p, 12)
        if interned is not None:
            assert sequence in self.sequences_cleared, "interned data before the state was cleared"
            for number, entry in fields(interned):
                e = fields(entry)
                self.interned[number][one(e, 1)] = one(e, 2).decode("utf-8")
        descriptor = one(p, 60)
        if descriptor is not None:
            self._track(fields(descriptor))
            return ("track", None)
        event = one(p, 11)
        if event is None:
            return ("other", None)
        ts = one(p, 8)
        assert ts is not None, "track event without a timestamp"
        e = fields(event)
        track = one(e, 11)
        assert track in self.tracks, f"event on undescribed track {track}"
        kind = one(e, 9)
        if kind == 2:
            return ("end", {"track": track, "ts": ts})
        if kind == 4:
            whole, real = one(e, 30), one(e, 44)  # counter_value, double_counter_value
            assert (whole is None) != (real is None), "a counter needs exactly one value"
            value = signed(whole) if whole is not None else \
                struct.unpack("<d", real.to_bytes(8, "little"))[0]
            self.counters.append((track, ts, value))
            return ("counter", None)
        if kind in (1, 3):
            assert flags & 2, "event with interned names lacks SEQ_NEEDS_INCREMENTAL_STATE"
        name = self._lookup(2, one(e, 10))
        args = {}
        for a in every(e, 4):
            a = fields(a)
            key = self._lookup(3, one(a, 1))
            text, real = one(a, 17), one(a, 5)  # string_value_iid, double_value
            if text is not None:
                args[key] = self._lookup(29, text)
            elif real is not None:
                args[key] = struct.unpack("<d", real.to_bytes(8, "little"))[0]
            else:
                args[key] = signed(one(a, 4))
        if kind == 3:
            self.instants.append({"track": track, "name": name, "ts": ts, "args": args})
            return ("instant", None)
        assert kind == 1, f"track event type {kind}"
        categories = [self._lookup(1, c) for c in every(e, 3)]
        return ("begin", {"track": track, "name": name, "category": categories[0],
                          "start": ts, "end": None, "args": args,
                          "flows": every(e, 47), "terminating": every(e, 48)})

    def _lookup(self, table, iid):
        assert iid in self.interned[table], f"interned id {iid} of table {table} undefined"
        return self.interned[table][iid]

    def _track(self, d):
        uuid = one(d, 1)
        assert uuid and uuid not in self.tracks, f"track uuid {uuid} missing or repeated"
        track = {"parent": one(d, 5), "name": None, "pid": None, "tid": None, "unit": None}
        process, thread, counter = one(d, 3), one(d, 4), one(d, 8)
        if process is not None:
            pr = fields(process)
            track.update(kind="process", pid=one(pr, 1), name=one(pr, 6).decode())
        elif thread is not None:
            th = fields(thread)
            name = one(th, 5)
            track.update(kind="thread", pid=one(th, 1), tid=one(th, 2),
                         name=name.decode() if name is not None else None)
        else:
            track.update(kind="counter" if counter is not None else "track",
                         name=one(d, 2).decode())
            if counter is not None:  # unit (a CounterDescriptor.Unit) or unit_name
                c = fields(counter)
                name = one(c, 6)
                track["unit"] = name.decode() if name is not None else one(c, 3)
        self.tracks[uuid] = track

    def tracks_of(self, kind):
        return {u: t for u, t in self.tracks.items() if t["kind"] == kind}

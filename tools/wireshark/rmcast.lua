-- rmcast.lua: a Wireshark/tshark dissector for rmcast's wire format (crates/wire).
--
--   tshark -X lua_script:tools/wireshark/rmcast.lua -r capture.pcap -V
--   wireshark -X lua_script:tools/wireshark/rmcast.lua capture.pcap
--   (or copy this file into Wireshark's personal plugins folder: Help > About > Folders)
--
-- What it reads (the layouts are the module docs of crates/wire/src/*.rs):
--   * the 20-byte common header (lib.rs): magic "RM", version 1, family, kind, flags
--     (0x01 retransmission), reserved (0), session id, source node id, payload length;
--   * every kind of every family: saw (1), bap (2), rra (3), tree (4: dsp/csp/cp),
--     prmp (5), xtp (6), srm (7), pgm (8), lms (9), ff (10) and the session layer of
--     `rmcast send`/`recv` (15), fields named rmcast.<family>.<field>;
--   * the 24-byte trailer of a sealed datagram (crates/net/src/secure.rs: a 64-bit counter,
--     the sealing time in microseconds since the Unix epoch, and a 16-byte tag). With
--     --encrypt the body is ciphertext: a sealed body that does not parse is shown as
--     such (preference "Sealed bodies are encrypted" shows every sealed body that way);
--   * several datagrams in one UDP payload (a loopback capture of a GSO send).
-- It checks what the wire crate's decoder checks (lengths, value ranges, bitmaps, spans) and
-- flags a datagram the decoder would refuse with an expert error (rmcast.malformed).
--
-- Detection: heuristically on any UDP port (magic, version, known family and kind, flag and
-- reserved bits, payload length agreeing with the datagram), and on the simulator's port
-- 7001 (which Wireshark would otherwise take for AFS/RX).

local rmcast = Proto("rmcast", "rmcast reliable multicast")

local HEADER_LEN = 20
local TRAILER_LEN = 24
local MAGIC = 0x524D
local VERSION = 1
local FLAG_RETX = 0x01
local SIM_PORT = 7001

local FAMILIES = {
    [1] = { name = "saw", kinds = { [1] = "DATA", [2] = "ACK" } },
    [2] = { name = "bap", kinds = { [1] = "DATA", [2] = "ACK" } },
    [3] = { name = "rra", kinds = { [1] = "DATA", [2] = "ACK", [3] = "POLL" } },
    [4] = { name = "tree", kinds = { [0] = "STATUS", [1] = "LOCAL STATUS", [2] = "LOCAL DATA",
        [3] = "DATA", [4] = "ASSIGN" } },
    [5] = { name = "prmp", kinds = { [1] = "DATA", [2] = "POLL", [3] = "DATAPOLL", [4] = "RESP" } },
    [6] = { name = "xtp", kinds = { [1] = "FIRST", [2] = "DATA", [3] = "CNTL", [4] = "FASTNAK" } },
    [7] = { name = "srm", kinds = { [1] = "DATA", [2] = "REQUEST", [3] = "REPAIR", [4] = "SESSION" } },
    [8] = { name = "pgm", kinds = { [1] = "ODATA", [2] = "RDATA", [3] = "NAK", [4] = "NCF", [5] = "SPM",
        [6] = "PARITY", [7] = "BNAK", [8] = "BNCF", [9] = "CCS", [10] = "CCFB" } },
    [9] = { name = "lms", kinds = { [1] = "DATA", [2] = "REQUEST", [3] = "DREQ", [4] = "REPAIR",
        [5] = "HEARTBEAT", [6] = "REFRESH" } },
    [10] = { name = "ff", kinds = { [1] = "DATA", [2] = "ACK", [3] = "CUMACK" } },
    [15] = { name = "session", kinds = { [1] = "ANNOUNCE", [2] = "JOIN", [3] = "REPORT", [4] = "END",
        [5] = "HAVE" } },
}

local family_names = {}
for n, f in pairs(FAMILIES) do family_names[n] = f.name end

-- ------------------------------------------------------------------------------- fields

local pf = {}
local function field(abbr, ctor, label, ...)
    local f = ctor("rmcast." .. abbr, label, ...)
    pf[abbr] = f
    return f
end

field("magic", ProtoField.uint16, "Magic", base.HEX)
field("version", ProtoField.uint8, "Version", base.DEC)
field("family", ProtoField.uint8, "Family", base.DEC, family_names)
field("family_name", ProtoField.string, "Family name")
field("kind", ProtoField.uint8, "Kind", base.DEC)
field("kind_name", ProtoField.string, "Kind name")
field("flags", ProtoField.uint8, "Flags", base.HEX)
field("flags.retx", ProtoField.bool, "Retransmission", 8, nil, FLAG_RETX)
field("flags.unknown", ProtoField.uint8, "Unknown flag bits", base.HEX, nil, 0xFE)
field("reserved", ProtoField.uint16, "Reserved", base.HEX)
field("session", ProtoField.uint32, "Session id", base.HEX_DEC)
field("source", ProtoField.uint32, "Source node", base.DEC)
field("length", ProtoField.uint32, "Payload length", base.DEC)
field("body", ProtoField.bytes, "Body")
field("ciphertext", ProtoField.bytes, "Encrypted body")
field("trailer", ProtoField.bytes, "Trailer")
field("trailer.counter", ProtoField.uint64, "Counter (sealing time, us since the epoch)", base.DEC)
field("trailer.time", ProtoField.absolute_time, "Sealed at", base.UTC)
field("trailer.tag", ProtoField.bytes, "Tag")
field("sealed", ProtoField.bool, "Sealed")

local U8, U16, U32, U64 = ProtoField.uint8, ProtoField.uint16, ProtoField.uint32, ProtoField.uint64
local BYTES = ProtoField.bytes

-- Family fields: { name, constructor, label, base/valuestring args... }
local family_fields = {
    saw = { { "seq", U8, "Sequence number (1 bit)" }, { "payload", BYTES, "Payload" } },
    bap = { { "seq", U16, "Sequence number (mod 2n)" }, { "first", U16, "Oldest in window" },
        { "payload", BYTES, "Payload" } },
    rra = { { "seq", U64, "Sequence number" }, { "low", U64, "Oldest held" },
        { "acker", U32, "Acker" }, { "cum", U64, "Cumulative (all below held)" },
        { "upto", U64, "Up to" }, { "bitmap_len", U16, "Bitmap length" }, { "bitmap", BYTES, "Bitmap" },
        { "payload", BYTES, "Payload" } },
    tree = { { "mvci", U32, "MVCI" }, { "lmvci", U32, "LMVCI" }, { "epi", U32, "EPI" },
        { "lepi", U32, "LEPI" }, { "k", U16, "Status interval (T_IN units)" }, { "l", U32, "L (blocks)" },
        { "lw_r", U64, "LW_r (first block not received)" }, { "buffer_available", U32, "Buffer available (blocks)" },
        { "lob", BYTES, "LOB (bit set = received)" }, { "seq", U64, "Block" }, { "base", U64, "Base block" },
        { "bits", BYTES, "Assigned blocks" }, { "payload", BYTES, "Payload" } },
    prmp = { { "seq", U64, "Sequence number" }, { "ts", U64, "Timestamp (ns)" },
        { "poll_seq", U64, "Poll HS" }, { "count", U16, "Children" }, { "child", U32, "Child" },
        { "le", U64, "LE (left edge)" }, { "hr", U64, "HR (highest received)" },
        { "bitmap_len", U16, "Bitmap length" }, { "bitmap", BYTES, "Bitmap (bit set = received)" },
        { "payload", BYTES, "Payload" } },
    xtp = { { "seq", U64, "Sequence number" }, { "sync", U16, "Sync" }, { "rseq", U64, "rseq (all below held)" },
        { "echo", U16, "Echo" }, { "options", U16, "Options", base.HEX },
        { "options.sreq", ProtoField.bool, "SREQ", 16, nil, 0x0001 },
        { "options.fastnak", ProtoField.bool, "FASTNAK", 16, nil, 0x0002 },
        { "options.eom", ProtoField.bool, "EOM", 16, nil, 0x0004 },
        { "options.recs", ProtoField.bool, "RECS", 16, nil, 0x0008 },
        { "options.multi", ProtoField.bool, "MULTI", 16, nil, 0x0010 },
        { "options.noerr", ProtoField.bool, "NOERR", 16, nil, 0x0020 },
        { "options.noflow", ProtoField.bool, "NOFLOW", 16, nil, 0x0040 },
        { "options.wclose", ProtoField.bool, "WCLOSE", 16, nil, 0x0080 },
        { "service", U8, "Service", base.DEC, { [1] = "reliable multicast", [2] = "unreliable multicast",
            [3] = "reliable unicast", [4] = "unreliable unicast" } },
        { "retx", U8, "Retransmission", base.DEC, { [0] = "go-back-N", [1] = "selective" } },
        { "maxdata", U16, "Max data" }, { "rate", U32, "Rate (bytes/s, 0 = none)" },
        { "window", U32, "Window (packets)" }, { "alloc", U64, "Alloc" }, { "nspans", U16, "Spans" },
        { "span.left", U64, "Left" }, { "span.right", U64, "Right" }, { "record.len", U16, "Record length" },
        { "record", BYTES, "Record" }, { "payload", BYTES, "Payload" } },
    srm = { { "seq", U64, "Sequence number" }, { "sender", U32, "Data sender" },
        { "requester", U32, "Requester" }, { "round", U8, "Round" }, { "dist_ns", U64, "Distance (ns)" },
        { "ts", U64, "Timestamp (ns)" }, { "next_seq", U64, "Next sequence number" },
        { "entries", U16, "Entries" }, { "entry.node", U32, "Node" }, { "entry.echo_ts", U64, "Echoed ts" },
        { "entry.delay_us", U32, "Delay (µs)" }, { "payload", BYTES, "Payload" } },
    pgm = { { "seq", U64, "Sequence number" }, { "spm_seq", U64, "SPM sequence number" },
        { "trail", U64, "Trailing edge" }, { "lead", U64, "Leading edge" }, { "block", U64, "Block" },
        { "index", U16, "Parity index" }, { "k", U16, "Source packets in the block" },
        { "total", U16, "Parity total" }, { "round", U32, "Feedback round" },
        { "rate", U64, "Rate (bytes/s)" }, { "suppress", U64, "Lowest rate this round (bytes/s)" },
        { "clr", U32, "Current limiting receiver" }, { "r_max_us", U32, "Largest RTT (µs)" },
        { "echo_node", U32, "Echoed receiver" }, { "echo_ts_us", U64, "Echoed timestamp (µs)" },
        { "echo_delay_us", U32, "Echo delay (µs)" }, { "ts_us", U64, "Timestamp (µs)" },
        { "rtt_us", U32, "RTT (µs)" }, { "recv_rate", U64, "Receive rate (bytes/s)" },
        { "loss_ppm", U32, "Loss event rate (ppm)" }, { "flags", U8, "Flags (bit 0: slow start or loss seen; bit 1: RTT measured)" },
        { "payload", BYTES, "Payload" } },
    lms = { { "seq", U64, "Sequence number" }, { "attempt", U16, "Attempt" }, { "requester", U32, "Requester" },
        { "tp", U32, "Turning point" }, { "tp_iface", U32, "Turning point interface" },
        { "lead", U64, "Lead" }, { "cost", U32, "Cost" }, { "payload", BYTES, "Payload" } },
    ff = { { "seq", U64, "Sequence number" }, { "ts", U64, "Timestamp (ns)" },
        { "cum", U64, "Cumulative (every packet below it received)" }, { "payload", BYTES, "Payload" } },
    session = { { "protocol", U8, "Protocol family", base.DEC, family_names },
        { "phase", U8, "Phase", base.DEC, { [0] = "gathering", [1] = "running" } },
        { "security", U8, "Security", base.HEX },
        { "security.auth", ProtoField.bool, "Authenticated", 8, nil, 0x01 },
        { "security.encrypt", ProtoField.bool, "Encrypted", 8, nil, 0x02 },
        { "reserved", U8, "Reserved" }, { "ack_delay_us", U32, "ACK delay (us)" },
        { "window", U16, "Window" }, { "ack_timeout_us", U32, "ACK timeout (us)" },
        { "count", U16, "Count" }, { "member", U32, "Member" }, { "params", BYTES, "Parameters" },
        { "dsp.status_min_us", U32, "Status min (us)" }, { "dsp.status_max_us", U32, "Status max (us)" },
        { "dsp.local_rtd_us", U32, "Local RTD (us)" }, { "dsp.r_f_milli", U32, "r_f (thousandths)" },
        { "node", U32, "Node" }, { "region", U16, "Region" },
        { "role", U8, "Role", base.DEC, { [0] = "member", [1] = "designated", [2] = "evicted", [3] = "consolidated", [4] = "combined", [5] = "exchange" } },
        { "addr.family", U8, "Address family" }, { "addr.ipv4", ProtoField.ipv4, "IPv4 address" },
        { "addr.ipv6", ProtoField.ipv6, "IPv6 address" }, { "addr.port", U16, "Port" },
        { "state", U8, "State", base.DEC, { [0] = "receiving", [1] = "complete", [2] = "failed" } },
        { "reason", U8, "Reason", base.DEC, { [0] = "none", [1] = "digest mismatch",
            [2] = "file name refused or target exists", [3] = "could not write the file",
            [4] = "malformed application data" } },
        { "bytes", U64, "Bytes" }, { "messages", U64, "Messages" }, { "repairs", U64, "Repairs" },
        { "duplicates", U64, "Duplicates" }, { "rejected", U64, "Rejected" },
        { "outcome", U8, "Outcome", base.DEC, { [0] = "completed", [1] = "evicted", [2] = "failed" } },
        { "size", U64, "File size" }, { "held", U64, "Bytes held" }, { "name_key", U64, "Name key" },
        { "digest", BYTES, "BLAKE3 digest" } },
}

for fam, list in pairs(family_fields) do
    for _, d in ipairs(list) do
        local ctor = d[2]
        if ctor == U8 or ctor == U16 or ctor == U32 or ctor == U64 then
            field(fam .. "." .. d[1], ctor, d[3], d[4] or base.DEC, d[5])
        elseif ctor == ProtoField.bool then
            field(fam .. "." .. d[1], ctor, d[3], d[4], d[5], d[6])
        else
            field(fam .. "." .. d[1], ctor, d[3])
        end
    end
end

local fields_list = {}
for _, f in pairs(pf) do fields_list[#fields_list + 1] = f end
rmcast.fields = fields_list

local ef_malformed = ProtoExpert.new("rmcast.malformed", "Malformed rmcast datagram",
    expert.group.MALFORMED, expert.severity.ERROR)
local ef_encrypted = ProtoExpert.new("rmcast.encrypted", "Sealed body shown as ciphertext",
    expert.group.SECURITY, expert.severity.NOTE)
local ef_sealed = ProtoExpert.new("rmcast.sealed.info", "Sealed datagram (24-byte trailer)",
    expert.group.SECURITY, expert.severity.CHAT)
local ef_records = ProtoExpert.new("rmcast.xtp.records.bad", "RECS payload ends inside a record",
    expert.group.PROTOCOL, expert.severity.WARN)
rmcast.experts = { ef_malformed, ef_encrypted, ef_sealed, ef_records }

rmcast.prefs.encrypted = Pref.bool("Sealed bodies are encrypted", false,
    "Show the body of every sealed datagram (one with the 24-byte trailer) as ciphertext. "
    .. "Off: a sealed body is decoded when it parses (--key-file without --encrypt) and shown "
    .. "as ciphertext when it does not.")
rmcast.prefs.sim_port = Pref.uint("UDP port", SIM_PORT,
    "Decode this UDP port as rmcast (the simulator's pcaps use 7001, which is AFS/RX's range)")

-- ----------------------------------------------------------------------------- reading
--
-- A body is parsed into a list of items first (nothing touches the tree), so a body that
-- does not parse can be reported as one error, or shown as ciphertext when sealed.

local Fail = {}
local function fail(msg) error(setmetatable({ msg = msg }, Fail), 0) end

local Reader = {}
Reader.__index = Reader

local function new_reader(tvb, off, len, fam)
    return setmetatable({ tvb = tvb, pos = off, stop = off + len, fam = fam, items = {}, info = {} },
        Reader)
end

function Reader:remaining() return self.stop - self.pos end

function Reader:need(n, what)
    if self:remaining() < n then
        fail(string.format("truncated: %s needs %d bytes, %d left", what, n, self:remaining()))
    end
end

-- Add an item: the field `name` of this family over `len` bytes at the current position.
function Reader:take(name, len, opts)
    self:need(len, self.fam .. "." .. name)
    local f = pf[self.fam .. "." .. name] or pf[name]
    assert(f, "no field " .. self.fam .. "." .. name)
    local item = { f = f, off = self.pos, len = len, append = opts and opts.append }
    local list = self.into or self.items
    list[#list + 1] = item
    self.pos = self.pos + len
    return item
end

local function getter(len)
    return function(self, name, summary)
        local off = self.pos
        local item = self:take(name, len)
        local r = self.tvb(off, len)
        local v = (len == 8) and r:uint64() or r:uint()
        item.value = v
        if summary then self.info[#self.info + 1] = (summary == true and name or summary) .. "=" .. tostring(v) end
        return v, item
    end
end
Reader.u8 = getter(1)
Reader.u16 = getter(2)
Reader.u32 = getter(4)
Reader.u64 = getter(8)

function Reader:bytes(name, n)
    if n == 0 then return nil end
    return self:take(name, n)
end

function Reader:rest(name)
    local n = self:remaining()
    if n > 0 then
        local item = self:take(name, n)
        item.append = string.format(" (%d bytes)", n)
        return item
    end
    return nil
end

-- A subtree labelled `label` over what `fn` reads.
function Reader:group(label, fn)
    local item = { label = label, off = self.pos, children = {} }
    local list = self.into or self.items
    list[#list + 1] = item
    local saved = self.into
    self.into = item.children
    fn()
    self.into = saved
    item.len = self.pos - item.off
    return item
end

function Reader:done()
    if self:remaining() ~= 0 then
        fail(string.format("%d trailing bytes after the body", self:remaining()))
    end
end

local U64MAX = UInt64.max()
local function u64(n) return UInt64(n) end
local function add1_sat(v) if v == U64MAX then return v end return v + 1 end
local function ceil8(n) return math.floor((n + 7) / 8) end
-- ceil(v / 8) of a UInt64 without overflow.
local function div_ceil8(v)
    local q = v / 8
    if v % 8 ~= u64(0) then q = q + 1 end
    return q
end

-- Describe a received-bitmap: bit i (LSB first) stands for first + i; list the clear bits.
local function describe_bits(tvb, off, len, nbits, first, set_means)
    local clear, set = {}, 0
    for i = 0, nbits - 1 do
        local byte = tvb(off + math.floor(i / 8), 1):uint()
        if bit.band(bit.rshift(byte, i % 8), 1) == 1 then
            set = set + 1
        elseif #clear < 16 then
            clear[#clear + 1] = tostring(first + i)
        end
    end
    local missing = nbits - set
    local s = string.format(" [%d of %d %s", set, nbits, set_means)
    if missing > 0 then
        s = s .. "; not: " .. table.concat(clear, ", ") .. (missing > #clear and ", ..." or "")
    end
    return s .. "]"
end

-- ------------------------------------------------------------------------------ bodies

local bodies = {}

local function seq_data(r)
    r:u64("seq", true)
    r:rest("payload")
end

bodies.saw = function(r, kind)
    local seq = r:u8("seq", true)
    if seq > 1 then fail("saw.seq: a stop-and-wait sequence number is one bit (0 or 1)") end
    if kind == 1 then r:rest("payload") end
end

bodies.bap = function(r, kind)
    r:u16("seq", true)
    if kind == 1 then
        r:u16("first", true)
        r:rest("payload")
    end
end

bodies.rra = function(r, kind)
    if kind == 1 then
        local seq = r:u64("seq", true)
        local low = r:u64("low", true)
        local acker, ai = r:u32("acker")
        if acker == 0xFFFFFFFF then ai.append = " (none)" end
        r.info[#r.info + 1] = "acker=" .. (acker == 0xFFFFFFFF and "none" or tostring(acker))
        if low > seq then fail("rra.low: the oldest held message is after this one") end
        r:rest("payload")
    elseif kind == 2 then
        local cum = r:u64("cum", true)
        local upto = r:u64("upto", true)
        local n = r:u16("bitmap_len")
        if cum > add1_sat(upto) then fail("rra.cum: cumulative point beyond the reported range") end
        local need = (upto > cum) and (upto - cum) or u64(0)
        need = div_ceil8(need)
        if u64(n) > need then fail("rra.bitmap: longer than the reported range needs") end
        local at = r.pos
        local item = r:bytes("bitmap", n)
        if item then
            local range = (upto - cum):tonumber()
            item.append = describe_bits(r.tvb, at, n, math.min(n * 8, range), cum + 1, "held")
        end
    else
        local upto = r:u64("upto", true)
        local low = r:u64("low", true)
        if low > add1_sat(upto) then fail("rra.low: the oldest held message is after the poll range") end
    end
end

local function tree_bitmap(r, name, l, first, means)
    if l == 0 then fail("tree." .. name .. ": L must be at least 1") end
    local n = ceil8(l)
    local at = r.pos
    local item = r:bytes(name, n)
    local used = l % 8
    if used ~= 0 then
        local last = r.tvb(at + n - 1, 1):uint()
        if bit.rshift(last, used) ~= 0 then fail("tree." .. name .. ": bits beyond L are set") end
    end
    if l <= 4096 then item.append = describe_bits(r.tvb, at, n, l, first, means) end
end

bodies.tree = function(r, kind)
    if kind == 0 or kind == 1 then
        local loc = kind == 1
        r:u32(loc and "lmvci" or "mvci")
        r:u32(loc and "lepi" or "epi", true)
        r:u16("k")
        local l = r:u32("l", "L")
        local lw = r:u64("lw_r", true)
        r:u32("buffer_available", "buf")
        tree_bitmap(r, "lob", l, lw, "received")
    elseif kind == 2 or kind == 3 then
        r:u32(kind == 2 and "lmvci" or "mvci")
        r:u64("seq", true)
        r:rest("payload")
    else
        r:u32("lmvci")
        r:u32("lepi", true)
        local l = r:u32("l", "L")
        local b = r:u64("base", true)
        tree_bitmap(r, "bits", l, b, "assigned")
    end
end

local function children(r)
    local n = r:u16("count", "children")
    if n == 0 then fail("prmp.cld: a poll must name at least one child") end
    r:need(4 * n, "prmp.cld")
    r:group(string.format("Children (%d)", n), function()
        for _ = 1, n do r:u32("child") end
    end)
end

bodies.prmp = function(r, kind)
    if kind == 1 then
        seq_data(r)
    elseif kind == 2 then
        r:u64("ts")
        r:u64("seq", true)
        children(r)
    elseif kind == 3 then
        local seq = r:u64("seq", true)
        r:u64("ts")
        local ps = r:u64("poll_seq", true)
        if ps < seq then fail("prmp.poll_seq: the poll's HS is below the data it rides on") end
        children(r)
        r:rest("payload")
    else
        r:u64("ts")
        r:u64("seq", true)
        local le = r:u64("le", true)
        local hr, hr_item = r:u64("hr")
        if hr == U64MAX then
            hr_item.append = " (nothing received)"
            r.info[#r.info + 1] = "hr=none"
        else
            r.info[#r.info + 1] = "hr=" .. tostring(hr)
        end
        if hr ~= U64MAX and le > add1_sat(hr) then fail("prmp.le: left edge beyond the highest received + 1") end
        local want = 0
        if hr ~= U64MAX and hr >= le then
            want = div_ceil8(hr - le + 1):tonumber()
        end
        local n = r:u16("bitmap_len")
        if n ~= want then fail("prmp.bitmap: length does not match le..=hr") end
        local at = r.pos
        local item = r:bytes("bitmap", n)
        if item then
            local nbits = (hr - le + 1):tonumber()
            if nbits <= 65536 then item.append = describe_bits(r.tvb, at, n, nbits, le, "received") end
        end
    end
end

local XTP_KNOWN = 0x00FF
local XTP_OPTS = { "sreq", "fastnak", "eom", "recs", "multi", "noerr", "noflow", "wclose" }

local function xtp_options(r)
    local at = r.pos
    local o, item = r:u16("options")
    if bit.band(o, bit.bnot(XTP_KNOWN)) ~= 0 then fail("reserved bits set: xtp options") end
    item.children = {}
    local names = {}
    for i, n in ipairs(XTP_OPTS) do
        item.children[#item.children + 1] = { f = pf["xtp.options." .. n], off = at, len = 2 }
        if bit.band(o, bit.lshift(1, i - 1)) ~= 0 then names[#names + 1] = n:upper() end
    end
    if #names > 0 then
        item.append = " (" .. table.concat(names, ", ") .. ")"
        r.info[#r.info + 1] = "[" .. table.concat(names, ",") .. "]"
    end
    return o
end

bodies.xtp = function(r, kind)
    local status = kind == 3 or kind == 4
    r:u64(status and "rseq" or "seq", true)
    r:u16(status and "echo" or "sync", status and "echo" or nil)
    local o = xtp_options(r)
    if kind == 1 then
        local s = r:u8("service")
        if s < 1 or s > 4 then fail("xtp.service: unknown service") end
        local x = r:u8("retx")
        if x > 1 then fail("xtp.retx: unknown retransmission scheme") end
        r:u16("maxdata")
        r:u32("rate")
        r:u32("window", true)
    elseif kind == 2 then
        if bit.band(o, 0x0008) ~= 0 and r:remaining() > 0 then
            local bad = false
            r:group("Records", function()
                local i = 0
                while r:remaining() > 0 do
                    if r:remaining() < 2 then bad = true break end
                    local n = r.tvb(r.pos, 2):uint()
                    if r:remaining() < 2 + n then bad = true break end
                    i = i + 1
                    r:group(string.format("Record %d (%d bytes)", i, n), function()
                        r:u16("record.len")
                        r:bytes("record", n)
                    end)
                end
            end)
            if bad then
                r.records_bad = true
                r:rest("payload")
            end
        else
            r:rest("payload")
        end
    else
        r:u64("alloc", true)
        local n = r:u16("nspans", "spans")
        if n > 64 then fail("xtp.spans: more than MAX_SPANS") end
        r:need(16 * n, "xtp.spans")
        local prev = nil
        for i = 1, n do
            local left = r.tvb(r.pos, 8):uint64()
            local right = r.tvb(r.pos + 8, 8):uint64()
            r:group(string.format("Span %d: [%s, %s)", i, tostring(left), tostring(right)), function()
                r:u64("span.left")
                r:u64("span.right")
            end)
            if left >= right then fail("xtp.spans: empty or inverted span") end
            if prev and left <= prev then fail("xtp.spans: spans not increasing and separated") end
            prev = right
        end
    end
end

bodies.srm = function(r, kind)
    if kind == 1 then
        seq_data(r)
    elseif kind == 2 then
        r:u32("sender", true)
        r:u8("round", true)
        r:u64("seq", true)
        r:u64("dist_ns")
    elseif kind == 3 then
        r:u32("sender", true)
        r:u32("requester", true)
        r:u8("round", true)
        r:u64("seq", true)
        r:u64("dist_ns")
        r:rest("payload")
    else
        r:u64("ts")
        r:u64("next_seq", true)
        local n = r:u16("entries", true)
        if n > 3000 then fail("srm.entries: more than MAX_SESSION_ENTRIES") end
        r:need(16 * n, "srm.entries")
        for i = 1, n do
            r:group(string.format("Entry %d: node %d", i, r.tvb(r.pos, 4):uint()), function()
                r:u32("entry.node")
                r:u64("entry.echo_ts")
                r:u32("entry.delay_us")
            end)
        end
    end
end

bodies.pgm = function(r, kind)
    if kind == 1 or kind == 2 then
        seq_data(r)
    elseif kind == 3 or kind == 4 then
        r:u64("seq", true)
    elseif kind == 6 then
        r:u64("block", true)
        r:u16("index", true)
        local k = r:u16("k", true)
        if k == 0 then fail("pgm.k: a block of no source packets") end
        r:rest("payload")
    elseif kind == 7 or kind == 8 then
        r:u64("block", true)
        r:u16("total", true)
    elseif kind == 9 then
        r:u32("round", true)
        r:u64("rate", true)
        r:u64("suppress")
        r:u32("clr", true)
        r:u32("r_max_us")
        r:u32("echo_node")
        r:u64("echo_ts_us")
        r:u32("echo_delay_us")
        local f = r:u8("flags")
        if bit.band(f, 0xFE) ~= 0 then fail("pgm.flags: unknown congestion status flags") end
    elseif kind == 10 then
        r:u32("round", true)
        r:u64("ts_us")
        r:u32("rtt_us", true)
        r:u64("rate", true)
        r:u64("recv_rate")
        local p = r:u32("loss_ppm", true)
        local f = r:u8("flags")
        if bit.band(f, 0xFC) ~= 0 then fail("pgm.flags: unknown congestion feedback flags") end
        if p > 1000000 then fail("pgm.loss_ppm: a loss event rate above one") end
    else
        r:u64("spm_seq", true)
        local trail = r:u64("trail", true)
        local lead = r:u64("lead", true)
        if trail > lead then fail("pgm.trail: trailing edge above the leading edge") end
    end
end

bodies.lms = function(r, kind)
    local function tp()
        local v, ti = r:u32("tp")
        if v == 0xFFFFFFFF then ti.append = " (none: multicast to the group)" end
        r.info[#r.info + 1] = "tp=" .. (v == 0xFFFFFFFF and "none" or tostring(v))
        r:u32("tp_iface")
        return v
    end
    if kind == 1 then
        seq_data(r)
    elseif kind == 2 then
        r:u64("seq", true)
        r:u16("attempt", true)
    elseif kind == 3 then
        r:u64("seq", true)
        r:u32("requester", true)
        if tp() == 0xFFFFFFFF then fail("lms.tp: a DREQ must name its turning point") end
        r:u16("attempt", true)
    elseif kind == 4 then
        r:u64("seq", true)
        tp()
        r:rest("payload")
    elseif kind == 5 then
        r:u64("lead", true)
    else
        r:u32("cost", true)
    end
end

bodies.ff = function(r, kind)
    r:u64("seq", true)
    r:u64("ts")
    if kind == 1 then r:rest("payload") end
    if kind == 3 then r:u64("cum", true) end
end

-- A unicast address: family (4 or 6) | 16 address bytes | port.
local function address(r)
    r:need(19, "session address")
    local fam = r.tvb(r.pos, 1):uint()
    local text
    r:group("Address", function()
        r:u8("addr.family")
        if fam == 4 then
            r:take("addr.ipv4", 4)
            text = tostring(r.tvb(r.pos - 4, 4):ipv4())
            for i = 0, 11 do
                if r.tvb(r.pos + i, 1):uint() ~= 0 then fail("session address: non-zero padding") end
            end
            r.pos = r.pos + 12
        elseif fam == 6 then
            r:take("addr.ipv6", 16)
            text = "[" .. tostring(r.tvb(r.pos - 16, 16):ipv6()) .. "]"
        else
            fail("session address: unknown address family")
        end
        local port = r:u16("addr.port")
        text = text .. ":" .. port
    end).label = "Address: " .. text
    return text
end

-- ANNOUNCE params: DspParams for dsp (family 4), peers for srm (family 7); checked in a
-- sub-reader so a parameter block that does not parse stays raw bytes (as the wire crate
-- leaves it to its own decoder).
local function announce_params(r, protocol)
    local n = r:remaining()
    if n == 0 then return end
    local sub = new_reader(r.tvb, r.pos, n, "session")
    local ok = pcall(function()
        if protocol == 4 then
            sub:group("DSP parameters", function()
                sub:u32("dsp.status_min_us")
                sub:u32("dsp.status_max_us")
                sub:u32("dsp.local_rtd_us")
                sub:u32("dsp.r_f_milli")
                local c = sub:u16("count")
                sub:need(26 * c, "dsp entries")
                for i = 1, c do
                    local g = sub:group("", function()
                        local node = sub:u32("node")
                        local region = sub:u16("region")
                        local role = sub:u8("role")
                        local a = address(sub)
                        sub.last = string.format("Receiver %d: node %d, region %d, %s, %s", i, node, region,
                            ({ [0] = "member", [1] = "designated", [2] = "evicted", [3] = "consolidated", [4] = "combined", [5] = "exchange" })[role] or "role?", a)
                    end)
                    g.label = sub.last
                end
            end)
        elseif protocol == 7 then
            sub:group("SRM peers", function()
                local c = sub:u16("count")
                sub:need(23 * c, "srm peers")
                for i = 1, c do
                    local g = sub:group("", function()
                        local node = sub:u32("node")
                        sub.last = string.format("Peer %d: node %d, %s", i, node, address(sub))
                    end)
                    g.label = sub.last
                end
            end)
        else
            fail("no parameters known")
        end
        sub:done()
    end)
    if ok then
        for _, it in ipairs(sub.items) do r.items[#r.items + 1] = it end
        r.pos = sub.stop
    else
        r:rest("params")
    end
end

bodies.session = function(r, kind)
    if kind == 1 then
        local protocol = r:u8("protocol")
        r.info[#r.info + 1] = "protocol=" .. (family_names[protocol] or tostring(protocol))
        local phase = r:u8("phase")
        if phase > 1 then fail("session.phase: unknown phase") end
        r.info[#r.info + 1] = phase == 0 and "gathering" or "running"
        local at = r.pos
        local sec, item = r:u8("security")
        if bit.band(sec, 0xFC) ~= 0 then fail("reserved bits set: session.security") end
        item.children = { { f = pf["session.security.auth"], off = at, len = 1 },
            { f = pf["session.security.encrypt"], off = at, len = 1 } }
        if r:u8("reserved") ~= 0 then fail("reserved bits set: session announce reserved byte") end
        r:u32("ack_delay_us")
        r:u16("window")
        r:u32("ack_timeout_us")
        local n = r:u16("count", "members")
        r:need(4 * n, "session.members")
        r:group(string.format("Members (%d)", n), function()
            for _ = 1, n do r:u32("member") end
        end)
        announce_params(r, protocol)
    elseif kind == 2 then
        if r:remaining() > 0 then r:u16("region", true) end
    elseif kind == 3 then
        local st = r:u8("state")
        if st > 2 then fail("session.state: unknown report state") end
        r.info[#r.info + 1] = ({ [0] = "receiving", [1] = "complete", [2] = "failed" })[st]
        r:u8("reason")
        r:u64("bytes", true)
        r:u64("messages")
        r:u64("repairs")
        r:u64("duplicates")
        r:u64("rejected")
    elseif kind == 5 then
        local n = r:u16("count", "files")
        if n > 56 then fail("session.held: must be at most 56 entries of 56 bytes") end
        r:need(56 * n, "session.held")
        for i = 1, n do
            r:group(string.format("File %d", i), function()
                local size = r:u64("size")
                local held = r:u64("held")
                if held > size then fail("session.held: holds more than the file's size") end
                r:u64("name_key")
                r:bytes("digest", 32)
            end)
        end
    else
        local n = r:u16("count", "receivers")
        r:need(5 * n, "session.outcomes")
        for i = 1, n do
            local node = r.tvb(r.pos, 4):uint()
            local o = r.tvb(r.pos + 4, 1):uint()
            if o > 2 then fail("session.outcome: unknown outcome") end
            r:group(string.format("Receiver %d: node %d %s", i, node,
                ({ [0] = "completed", [1] = "evicted", [2] = "failed" })[o]), function()
                r:u32("node")
                r:u8("outcome")
            end)
        end
    end
end

-- ------------------------------------------------------------------------------ header

-- Whether the bytes at `off` open an rmcast datagram: magic, version, known family and kind,
-- no unknown flag bits, zero reserved field. Returns the family, kind and payload length.
local function header_at(tvb, off)
    if tvb:len() - off < HEADER_LEN then return nil end
    if tvb(off, 2):uint() ~= MAGIC or tvb(off + 2, 1):uint() ~= VERSION then return nil end
    local fam = FAMILIES[tvb(off + 3, 1):uint()]
    if not fam or not fam.kinds[tvb(off + 4, 1):uint()] then return nil end
    if bit.band(tvb(off + 5, 1):uint(), bit.bnot(FLAG_RETX)) ~= 0 then return nil end
    if tvb(off + 6, 2):uint() ~= 0 then return nil end
    return fam, tvb(off + 4, 1):uint(), tvb(off + 16, 4):uint()
end

-- The datagrams in a UDP payload: a list of { off, len, sealed }, or nil if the payload is
-- not rmcast. One datagram is header + body, or header + body + trailer when sealed; a
-- loopback capture of a GSO send holds several back to back (all sealed or none).
local function split(tvb)
    local total = tvb:len()
    local fam, _, plen = header_at(tvb, 0)
    if not fam then return nil end
    local plain = HEADER_LEN + plen
    local sealed
    if plain == total then
        sealed = false
    elseif plain + TRAILER_LEN == total then
        sealed = true
    elseif plain < total and header_at(tvb, plain) then
        sealed = false
    elseif plain + TRAILER_LEN < total and header_at(tvb, plain + TRAILER_LEN) then
        sealed = true
    else
        return { { off = 0, len = total, bad = true } }
    end
    local out, off = {}, 0
    while off < total do
        local f, _, n = header_at(tvb, off)
        local len = HEADER_LEN + (f and n or 0) + (sealed and TRAILER_LEN or 0)
        if not f or off + len > total then
            out[#out + 1] = { off = off, len = total - off, bad = true }
            break
        end
        out[#out + 1] = { off = off, len = len, sealed = sealed }
        off = off + len
    end
    return out
end

-- A text item (no field) over `len` bytes at `off`.
local function text_item(tree, tvb, off, len, label)
    if len > 0 then return tree:add(tvb(off, len), label) end
    return tree:add(label)
end

local function emit(tree, tvb, items)
    for _, it in ipairs(items) do
        local ti
        if it.f then
            ti = tree:add(it.f, tvb(it.off, it.len))
        else
            ti = text_item(tree, tvb, it.off, it.len, it.label)
        end
        if it.append then ti:append_text(it.append) end
        if it.children then emit(ti, tvb, it.children) end
    end
end

local function dissect_one(tvb, pinfo, root, d, single)
    local off = d.off
    local t = single and root or text_item(root, tvb, off, d.len, "Datagram")
    if d.bad and tvb:len() - off < HEADER_LEN then
        t:add_proto_expert_info(ef_malformed, string.format("truncated: %d bytes, a header is %d",
            tvb:len() - off, HEADER_LEN))
        return "rmcast [malformed: truncated]"
    end
    local famno = tvb(off + 3, 1):uint()
    local kind = tvb(off + 4, 1):uint()
    local flags = tvb(off + 5, 1):uint()
    local fam = FAMILIES[famno]
    local kname = fam.kinds[kind]
    local plen = tvb(off + 16, 4):uint()

    local h = t:add(tvb(off, HEADER_LEN), "Header")
    h:add(pf.magic, tvb(off, 2)):append_text(" (\"RM\")")
    h:add(pf.version, tvb(off + 2, 1))
    h:add(pf.family, tvb(off + 3, 1))
    h:add(pf.family_name, fam.name):set_generated()
    h:add(pf.kind, tvb(off + 4, 1)):append_text(" (" .. kname .. ")")
    h:add(pf.kind_name, kname):set_generated()
    local ft = h:add(pf.flags, tvb(off + 5, 1))
    ft:add(pf["flags.retx"], tvb(off + 5, 1))
    ft:add(pf["flags.unknown"], tvb(off + 5, 1))
    if bit.band(flags, FLAG_RETX) ~= 0 then ft:append_text(" (retransmission)") end
    h:add(pf.reserved, tvb(off + 6, 2))
    h:add(pf.session, tvb(off + 8, 4))
    h:add(pf.source, tvb(off + 12, 4))
    h:add(pf.length, tvb(off + 16, 4))

    local summary = string.upper(fam.name) .. " " .. kname
    t:append_text(string.format(", %s, session 0x%08x, node %d", summary, tvb(off + 8, 4):uint(),
        tvb(off + 12, 4):uint()))
    if d.bad then
        local got = d.len - HEADER_LEN
        local msg = string.format("header says %d payload bytes, the datagram carries %d", plen, got)
        if got >= TRAILER_LEN then
            msg = msg .. string.format(" (%d before a 24-byte trailer)", got - TRAILER_LEN)
        end
        t:add_proto_expert_info(ef_malformed, msg)
        if got > 0 then t:add(pf.body, tvb(off + HEADER_LEN, got)) end
        return summary .. " [malformed: length]"
    end

    local r = new_reader(tvb, off + HEADER_LEN, plen, fam.name)
    local ok, err = true, nil
    if not (d.sealed and rmcast.prefs.encrypted) then
        ok, err = pcall(function()
            bodies[fam.name](r, kind)
            r:done()
        end)
        if not ok and getmetatable(err) ~= Fail then error(err, 0) end
    end
    local body_off = off + HEADER_LEN
    if ok and not (d.sealed and rmcast.prefs.encrypted) then
        if plen > 0 then
            local b = t:add(tvb(body_off, plen), string.format("%s %s body", string.upper(fam.name), kname))
            emit(b, tvb, r.items)
            if r.records_bad then b:add_proto_expert_info(ef_records) end
        end
        if #r.info > 0 then summary = summary .. " " .. table.concat(r.info, " ") end
    elseif d.sealed then
        if plen > 0 then
            t:add(pf.ciphertext, tvb(body_off, plen)):add_proto_expert_info(ef_encrypted,
                "Sealed body shown as ciphertext" .. (err and (" (as plaintext: " .. err.msg .. ")") or ""))
        end
        summary = summary .. " [encrypted]"
    else
        if plen > 0 then t:add(pf.body, tvb(body_off, plen)) end
        t:add_proto_expert_info(ef_malformed, err.msg)
        summary = summary .. " [malformed: " .. err.msg .. "]"
    end
    if bit.band(flags, FLAG_RETX) ~= 0 then summary = summary .. " [retx]" end

    t:add(pf.sealed, d.sealed and true or false):set_generated()
    if d.sealed then
        local at = body_off + plen
        local tr = t:add(pf.trailer, tvb(at, TRAILER_LEN))
        tr:add_proto_expert_info(ef_sealed)
        local c = tvb(at, 8):uint64()
        tr:add(pf["trailer.counter"], tvb(at, 8))
        local secs = (c / 1000000):tonumber()
        local usecs = (c % 1000000):tonumber()
        tr:add(pf["trailer.time"], tvb(at, 8), NSTime(secs, usecs * 1000)):set_generated()
        tr:add(pf["trailer.tag"], tvb(at + 8, 16))
        summary = summary .. " [sealed]"
    end
    return summary
end

function rmcast.dissector(tvb, pinfo, tree)
    local parts = split(tvb)
    if not parts then return 0 end
    pinfo.cols.protocol = "RMCAST"
    local root = tree:add(rmcast, tvb())
    if #parts > 1 then root:append_text(string.format(" (%d datagrams)", #parts)) end
    local infos = {}
    for _, d in ipairs(parts) do
        infos[#infos + 1] = dissect_one(tvb, pinfo, root, d, #parts == 1)
    end
    if #infos > 4 then
        local n = #infos
        infos = { infos[1], infos[2], infos[3], string.format("(+%d more)", n - 3) }
    end
    pinfo.cols.info = table.concat(infos, ", ")
    return tvb:len()
end

local function heuristic(tvb, pinfo, tree)
    if not split(tvb) then return false end
    rmcast.dissector(tvb, pinfo, tree)
    return true
end

rmcast:register_heuristic("udp", heuristic)

local udp_port = DissectorTable.get("udp.port")
local registered_port = SIM_PORT
udp_port:add(registered_port, rmcast)

function rmcast.prefs_changed()
    if rmcast.prefs.sim_port ~= registered_port then
        udp_port:remove(registered_port, rmcast)
        registered_port = rmcast.prefs.sim_port
        if registered_port ~= 0 then udp_port:add(registered_port, rmcast) end
    end
end

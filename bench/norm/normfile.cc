/*
 * normfile: one file over NORM (RFC 5740, NRL's libnorm as Debian ships it), for
 * `rmcast bench net --tools norm`. Written for the benchmark; NORM's own normCast is not
 * packaged by Debian.
 *
 *   normfile send GROUP PORT IFACE RATE_BPS RECEIVER_IDS FILE [cc] [grtt=SECONDS]
 *   normfile recv GROUP PORT IFACE NODE_ID DIR
 *
 * The sender sends FILE at RATE_BPS (NORM's own default is 64 kbit/s), or with `cc` under
 * NORM's congestion control (NORM-CC) with RATE_BPS as its ceiling; `grtt=` starts its
 * group round-trip estimate there instead of NORM's 0.5 s (receivers scale their NACK
 * back-off by it until probing brings it down). It uses NORM's usual
 * code (segments of 1,400 bytes, blocks of 64 with up to 16 Reed-Solomon parity segments
 * sent on demand, none proactively), names every receiver an acking node, sets a
 * watermark on the file and exits 0 once every receiver acknowledged it (asking again
 * while one has not, until it is killed). A receiver writes the file into DIR as bench.bin
 * (renamed from its cache name once complete, so a partial file never has that name) and
 * keeps answering the sender until killed. Both ask for the socket buffers rmcast asks for
 * (32 MiB to receive, 8 MiB to send); libnorm sets them with plain SO_RCVBUF/SO_SNDBUF, so
 * net.core.rmem_max/wmem_max cap them (4 MiB on the machine of docs/performance.md).
 */
#include <normApi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEGMENT 1400
#define BLOCK 64
#define PARITY 16
#define RCVBUF (32u << 20)
#define SNDBUF (8u << 20)

static int usage(void) {
    fprintf(stderr,
            "usage: normfile send GROUP PORT IFACE RATE_BPS ID,ID,... FILE [cc] [grtt=S]\n"
            "       normfile recv GROUP PORT IFACE NODE_ID DIR\n");
    return 2;
}

static NormSessionHandle session(NormInstanceHandle in, const char *group, const char *port,
                                 const char *iface, NormNodeId id) {
    NormSessionHandle s = NormCreateSession(in, group, (UINT16)atoi(port), id);
    if (s == NORM_SESSION_INVALID) {
        fprintf(stderr, "normfile: NormCreateSession failed\n");
        exit(1);
    }
    if (!NormSetMulticastInterface(s, iface)) {
        fprintf(stderr, "normfile: no interface %s\n", iface);
        exit(1);
    }
    NormSetTTL(s, 1);
    /* Receivers on the sender's host (the benchmark's loopback runs) share its port and
     * hear it only so. */
    bool lo = strcmp(iface, "lo") == 0;
    NormSetRxPortReuse(s, lo);
    NormSetLoopback(s, lo);
    return s;
}

static int send_file(int argc, char **argv) {
    if (argc < 8) return usage();
    bool cc = false;
    double grtt = -1.0;
    for (int i = 8; i < argc; i++) {
        if (strcmp(argv[i], "cc") == 0)
            cc = true;
        else if (strncmp(argv[i], "grtt=", 5) == 0 && atof(argv[i] + 5) > 0.0)
            grtt = atof(argv[i] + 5);
        else
            return usage();
    }
    NormInstanceHandle in = NormCreateInstance(false);
    NormSessionHandle s = session(in, argv[2], argv[3], argv[4], 1);
    if (grtt > 0.0) NormSetGrttEstimate(s, grtt);
    double rate = atof(argv[5]);
    if (cc) {
        NormSetCongestionControl(s, true, true);
        NormSetTxRateBounds(s, -1.0, rate);
    } else {
        NormSetTxRate(s, rate);
    }
    NormSetTxSocketBuffer(s, SNDBUF);
    NormSetRxSocketBuffer(s, RCVBUF);
    char *ids = strdup(argv[6]);
    for (char *t = strtok(ids, ","); t; t = strtok(NULL, ",")) {
        if (!NormAddAckingNode(s, (NormNodeId)strtoul(t, NULL, 0))) {
            fprintf(stderr, "normfile: NormAddAckingNode %s failed\n", t);
            return 1;
        }
    }
    if (!NormStartSender(s, NormGetRandomSessionId(), 16u << 20, SEGMENT, BLOCK, PARITY, 0)) {
        fprintf(stderr, "normfile: NormStartSender failed\n");
        return 1;
    }
    NormSetAutoParity(s, 0);
    NormObjectHandle f = NormFileEnqueue(s, argv[7], "bench.bin", 9);
    if (f == NORM_OBJECT_INVALID) {
        fprintf(stderr, "normfile: cannot enqueue %s\n", argv[7]);
        return 1;
    }
    NormSetWatermark(s, f, true);
    NormEvent e;
    while (NormGetNextEvent(in, &e, true)) {
        if (e.type == NORM_TX_WATERMARK_COMPLETED) {
            if (NormGetAckingStatus(s, NORM_NODE_ANY) == NORM_ACK_SUCCESS) {
                NormDestroyInstance(in);
                return 0;
            }
            /* Some receiver did not acknowledge within NORM's robust factor: ask again,
             * as normCast does, until the benchmark's timeout stops us. */
            NormResetWatermark(s);
        }
    }
    return 1;
}

static int recv_file(int argc, char **argv) {
    if (argc != 7) return usage();
    const char *dir = argv[6];
    NormInstanceHandle in = NormCreateInstance(false);
    char cache[4096];
    snprintf(cache, sizeof cache, "%s/", dir);
    if (!NormSetCacheDirectory(in, cache)) {
        fprintf(stderr, "normfile: bad directory %s\n", dir);
        return 1;
    }
    NormSessionHandle s =
        session(in, argv[2], argv[3], argv[4], (NormNodeId)strtoul(argv[5], NULL, 0));
    NormSetRxSocketBuffer(s, RCVBUF);
    NormSetDefaultSyncPolicy(s, NORM_SYNC_ALL);
    if (!NormStartReceiver(s, 16u << 20)) {
        fprintf(stderr, "normfile: NormStartReceiver failed\n");
        return 1;
    }
    NormEvent e;
    while (NormGetNextEvent(in, &e, true)) {
        if (e.type == NORM_RX_OBJECT_COMPLETED &&
            NormObjectGetType(e.object) == NORM_OBJECT_FILE) {
            char final[4096];
            snprintf(final, sizeof final, "%s/bench.bin", dir);
            if (!NormFileRename(e.object, final)) {
                fprintf(stderr, "normfile: cannot rename the file to %s\n", final);
                return 1;
            }
            fprintf(stderr, "normfile: received %s\n", final);
        }
    }
    return 1;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "send") == 0) return send_file(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "recv") == 0) return recv_file(argc, argv);
    return usage();
}

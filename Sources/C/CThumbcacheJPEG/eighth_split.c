// A one-scan JPEG at 1/8 on two threads, guessed or cut at a restart marker (eighth_internal.h
// says where the rest is).
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cprocess.h"
#include "eighth_internal.h"

// MARK: A sequential scan on two threads
//
// Huffman codes carry no positions, so a scan cannot be cut in two and each half decoded on its
// own; but a decoder started at an arbitrary bit soon falls into step with the real code
// boundaries (JPEG's codes resynchronize within a few blocks). The second thread guesses: it
// decodes from the middle of the data, as though an MCU began there, and records where each block
// it finds begins, its place in an MCU and its DC difference. The first thread decodes from the
// start; once past the middle, a block of its that begins at a bit where a guessed block begins,
// at the same place in an MCU, is the same block, and so is every block after it (the same
// state decodes the same way). From there the guesses are taken, their DC differences summed on
// from the first thread's predictors. Where the guesser never falls into step, the first thread
// decodes it all, as it would alone: the pixels never depend on the guess.
//
// Bytes are not blocks (a sky is cheaper than a meadow), so the guesser may finish first: it then
// guesses again, from halfway between where the first thread has read to and where its last run
// began, until that run falls into step with the one after it in the data. The first thread takes
// the runs in the data's order, each from where it meets the next.

typedef struct {
    uint32_t at;     // where the block begins: bits of data from its run's first byte
    int16_t diff;    // its DC difference
    uint8_t phase;   // its place in an MCU, counted from where its run began (or began again)
    uint8_t flags;   // GUESS_PADDED: it used bits past the data; GUESS_AGAIN: its run began again here
} guessed_block;     // 8 bytes: a 4:2:0 chroma block's sums are the next in `parts` (parts_before)

enum { GUESS_PADDED = 1, GUESS_AGAIN = 2 };
enum { RUN_GOING = 0, RUN_JOINED = 1, RUN_GAVE_UP = 2 };

typedef struct {
    const uint8_t *start;       // its first byte
    uint64_t base;              // bits of data before it
    uint32_t first;             // its first record in `found`
    uint32_t parts_first;       // its first record's place in `parts` (4:2:0 chroma blocks' sums)
    _Atomic uint32_t published; // its records so far
    _Atomic int state;          // RUN_JOINED: in step with the run after it (run 0: at the data's end)
    uint32_t joins, into;       // its record `joins` is the next run's record `into` (both from their firsts)
} guess_run;

struct guess {
    const uint8_t *data, *end;  // the scan's data (to the end of the file)
    mcu_block blocks[10];
    int count;
    guessed_block *found;
    square_part *parts;
    uint32_t capacity, parts_capacity;
    guess_run runs[MAX_RUNS];   // each begins before the one before it
    _Atomic int run_count;
    _Atomic uint64_t first_read;        // bytes of data the first thread has read
    // The guesser's own copy of the data, read from the file (else `data` is the caller's memory):
    // what the file holds is read in order by the first thread, never mapped, so that one cut
    // short while it is read is an error, not a fault.
    int file;
    uint64_t offset;
    size_t length;
    uint8_t *copy;
    _Atomic int stop;
    reader last;                // run 0's reader where it stopped: the end of the scan's data
};

// One block decoded by the guesser into `q` (and `part`); 0 where no block can begin here.
static inline __attribute__((always_inline)) int guess_one(reader *r, const mcu_block *m, guessed_block *q, square_part *part) {
    uint64_t buffer;
    int bits;
    LOAD_BITS();
    int diff;
    WALK_DC(diff, m->dc);
    q->diff = (int16_t)diff;
    if (m->c->square) {
        int16_t values[64] = {0}, *coef = values;
        int any = 0;
        WALK_AC(m->ac, coef, any);
        *part = (square_part){0, 0, {0, 0}};
        if (any && !square_part_of(coef, m->c->quant, part)) return 0;
    } else {
        int16_t *none = NULL;
        int any = 0;
        WALK_AC(m->ac, none, any);
        (void)any;
    }
    if (r->padding > bits) q->flags |= GUESS_PADDED;
    SAVE_BITS();
    return 1;
}

// `at`, or the byte after it where it is the 0x00 of a stuffed 0xFF 0x00: a place that does not
// split one.
static const uint8_t *whole(const uint8_t *at) { return at[-1] == 0xFF ? at + 1 : at; }

// Bits of data from `data` to `at` (a place whole() gave), a stuffed 0xFF 0x00 being one byte of
// data; -1 where a marker comes first (*marker then holds it).
static int64_t bits_to(const uint8_t *data, const uint8_t *at, const uint8_t **marker) {
    int64_t stuffed = 0;
    for (const uint8_t *p = data; (p = memchr(p, 0xFF, (size_t)(at - p))) != NULL; p += 2, stuffed++) {
        if (p[1] != 0) {
            *marker = p;
            return -1;
        }
    }
    return ((int64_t)(at - data) - stuffed) * 8;
}

// Where in `data` (before `limit`) the `count`th byte of data is (a stuffed 0xFF 0x00 is one).
static const uint8_t *byte_of(const uint8_t *data, const uint8_t *limit, uint64_t count) {
    const uint8_t *p = data;
    uint64_t stuffed = 0;
    while ((p = memchr(p, 0xFF, (size_t)(limit - p))) != NULL && p + 1 < limit) {
        if ((uint64_t)(p - data) - stuffed >= count) break;
        stuffed++;
        p += 2;
    }
    uint64_t raw = count + stuffed;
    return raw < (uint64_t)(limit - data) ? data + raw : limit;
}

// The middle of the scan's data, taken to end with the file unless a marker comes before; NULL
// where the data is too short to be worth a second thread.
static const uint8_t *middle_of(const uint8_t *data, const uint8_t *end, uint64_t *bits) {
    for (;;) {
        if (end - data < SPLIT_MIN_BYTES) return NULL;
        const uint8_t *middle = whole(data + (end - data) / 2), *marker = NULL;
        int64_t before = bits_to(data, middle, &marker);
        if (before >= 0) {
            *bits = (uint64_t)before;
            return middle;
        }
        end = marker;  // a marker before the middle: the scan ends there
    }
}

// Run `k` of the guesser, from its start until it falls into step with run k - 1 (or, run 0,
// reaches the end of the data). Its state says how it ended.
static void guess_run_blocks(struct guess *g, int k, uint32_t *found, uint32_t *parts) {
    guess_run *run = &g->runs[k], *next = k > 0 ? &g->runs[k - 1] : NULL;
    reader state = {.p = run->start, .n = (size_t)(g->end - run->start), .in_memory = 1};
    uint64_t next_start = next ? next->base - run->base : UINT64_MAX;  // in this run's bits
    uint32_t next_count = next ? atomic_load_explicit(&next->published, memory_order_acquire) : 0, cursor = 0, past = 0;
    int phase = 0, again = 0, outcome = RUN_GAVE_UP;
    while (*found < g->capacity && !atomic_load_explicit(&g->stop, memory_order_relaxed)) {
        if (state.bits < 32) eighth_fill_bits(&state);
        if (state.marker && state.padding >= state.bits) {  // nothing left but padding
            if (!next) {
                g->last = state;
                outcome = RUN_JOINED;
            }
            break;
        }
        uint64_t at = state.loaded * 8 - (uint64_t)state.bits;
        if (at >= next_start) {
            uint64_t there = at - next_start;
            while (cursor < next_count && g->found[next->first + cursor].at < there) cursor++;
            if (cursor < next_count && g->found[next->first + cursor].at == there && g->found[next->first + cursor].phase == phase) {
                run->joins = *found - run->first;
                run->into = cursor;
                outcome = RUN_JOINED;
                break;
            }
            if (++past > RUN_SLACK || cursor == next_count) break;
        }
        int square = g->blocks[phase].c->square;
        if (square && *parts == g->parts_capacity) break;
        guessed_block *q = &g->found[*found];
        q->at = (uint32_t)at;
        q->phase = (uint8_t)phase;
        q->flags = again ? GUESS_AGAIN : 0;
        if (!guess_one(&state, &g->blocks[phase], q, &g->parts[square ? *parts : 0])) {
            // Not a block here (a code no table has): begin again at the next byte not yet read.
            state.bits = 0;
            state.buffer = 0;
            again = 1;
            phase = 0;
            continue;
        }
        again = 0;
        phase = phase + 1 == g->count ? 0 : phase + 1;
        *parts += (uint32_t)square;
        (*found)++;
        if ((*found & 63) == 0) atomic_store_explicit(&run->published, *found - run->first, memory_order_release);
    }
    atomic_store_explicit(&run->published, *found - run->first, memory_order_release);
    atomic_store_explicit(&run->state, outcome, memory_order_release);
}

// The guesser's thread: run 0 from the middle of the data; then, while the first thread is far
// enough behind the last run's start, another from halfway between.
static void *guess_blocks(void *argument) {
    struct guess *g = argument;
    if (!g->data) {
        g->copy = malloc(g->length);
        size_t got = 0;
        while (g->copy && got < g->length) {
            ssize_t n = pread(g->file, g->copy + got, g->length - got, (off_t)(g->offset + got));
            if (n <= 0) break;
            got += (size_t)n;
        }
        if (!g->copy || got < SPLIT_MIN_BYTES) return NULL;  // the first thread decodes alone
        g->data = g->copy;
        g->end = g->copy + got;
    }
    uint32_t found = 0, parts = 0;
    uint64_t base = 0;
    const uint8_t *start = middle_of(g->data, g->end, &base);
    for (int k = 0; start && k < MAX_RUNS && !atomic_load_explicit(&g->stop, memory_order_relaxed); k++) {
        g->runs[k].start = start;
        g->runs[k].base = base;
        g->runs[k].first = found;
        g->runs[k].parts_first = parts;
        atomic_store_explicit(&g->run_count, k + 1, memory_order_release);
        guess_run_blocks(g, k, &found, &parts);
        if (atomic_load_explicit(&g->runs[k].state, memory_order_relaxed) != RUN_JOINED) break;
        const uint8_t *from = byte_of(g->data, start, atomic_load_explicit(&g->first_read, memory_order_acquire) + 4096);
        if (start - from < SPLIT_MIN_BYTES / 2) break;
        const uint8_t *marker = NULL;
        start = whole(from + (start - from) / 2);
        int64_t before = bits_to(g->data, start, &marker);  // no marker: it is before run 0's start
        if (before < 0) break;
        base = (uint64_t)before;
    }
    return NULL;
}

// Whether the first thread's block that begins `at` bits into the data, at `phase` in its MCU, is
// a guessed one, in the run that begins last before it (st->guess_run, st->guess_index then).
int eighth_in_step(scan_state *st, uint64_t at, int phase) {
    struct guess *g = st->guess;
    int runs = atomic_load_explicit(&g->run_count, memory_order_acquire), best = -1;
    for (int k = 0; k < runs; k++)
        if (g->runs[k].base <= at && (best < 0 || g->runs[k].base > g->runs[best].base)) best = k;
    if (best < 0) return 0;
    guess_run *run = &g->runs[best];
    uint64_t relative = at - run->base;
    uint32_t *cursor = &st->guess_cursor[best];
    uint32_t published = atomic_load_explicit(&run->published, memory_order_acquire);
    while (*cursor < published && g->found[run->first + *cursor].at < relative) (*cursor)++;
    // Where the guesser is behind (or has given up) this thread goes on: once in step, every
    // later block of the guesser's is one of this thread's, so a later one will do.
    if (*cursor == published) return 0;
    const guessed_block *q = &g->found[run->first + *cursor];
    if (q->at != relative || q->phase != phase) return 0;
    st->guess_run = best;
    st->guess_index = *cursor;
    return 1;
}

// At each row of MCUs: tells the guesser how far this thread has read, and notes where its
// earliest run begins.
void eighth_watch_guesses(scan_state *st, const reader *r) {
    struct guess *g = st->guess;
    atomic_store_explicit(&g->first_read, r->loaded, memory_order_release);
    int runs = atomic_load_explicit(&g->run_count, memory_order_acquire);
    uint64_t watch = UINT64_MAX;
    for (int k = 0; k < runs; k++)
        if (g->runs[k].base < watch) watch = g->runs[k].base;
    st->guess_watch = watch;
}

// Where the next taken block goes: its place in its MCU and the MCU's.
typedef struct {
    int phase;
    uint32_t mx, my;
} block_place;

// Where run `k`'s record `index` (from its first) has its sums in `parts`, if it is a 4:2:0 chroma
// block: the records before it in the run counted (a run is taken up from near its start).
static uint32_t parts_before(const struct guess *g, int k, uint32_t index) {
    const guess_run *run = &g->runs[k];
    uint32_t part = run->parts_first;
    for (uint32_t i = 0; i < index; i++) part += (uint32_t)g->blocks[g->found[run->first + i].phase].c->square;
    return part;
}

// One guessed block into the planes at `at` (then moved on), its DC difference summed on; a 4:2:0
// chroma block's sums are parts[*part], which moves on.
static int take_guess(scan_state *st, struct guess *g, const mcu_block *blocks, int count, block_place *at,
                      const guessed_block *q, int first, uint32_t mcus_wide, uint32_t *part) {
    const scan *s = st->s;
    if ((!first && (q->flags & GUESS_AGAIN)) || (q->flags & GUESS_PADDED)) return 0;
    const mcu_block *m = &blocks[at->phase];
    component *c = m->c;
    uint32_t bx = at->mx * (uint32_t)(s->count == 1 ? 1 : c->h) + m->x, by = at->my * (uint32_t)(s->count == 1 ? 1 : c->v) + m->y;
    if (++at->phase == count) {
        at->phase = 0;
        if (++at->mx == mcus_wide) {
            at->mx = 0;
            at->my++;
        }
    }
    unsigned sum = (unsigned)st->predictor[m->k] + (unsigned)q->diff;
    st->predictor[m->k] = (int)sum;
    if (!c->square) {
        c->dc[(size_t)by * c->plane_wide + bx] = (int16_t)sum;
        return 1;
    }
    size_t stride = 2 * (size_t)c->plane_wide;
    return square_finish((int16_t)sum, c->quant[0], &g->parts[(*part)++], c->samples + 2 * (size_t)by * stride + 2 * (size_t)bx, stride);
}

static void end_guessing(struct guess *g, pthread_t thread, int started);

// The rest of a two-thread decode once the threads met: the guesses still to take, taken as rows
// are asked for, so that the rows above the meeting are made (and downscaled) while the guesser
// decodes on.
struct pending {
    struct guess *g;
    pthread_t thread;
    scan s;
    tables t;
    reader r;
    scan_state st;        // the first thread's, its predictors where it stopped
    mcu_block blocks[10];
    int count;
    block_place at;       // where the next block taken goes
    int run, first;
    uint32_t index;       // the next guess to take, in run `run`
    uint32_t part;        // the next 4:2:0 chroma block's place in the guesser's `parts`
    uint32_t mcus_wide, mcus_high, rows_made;
    const int *fatal_warning;
};

void eighth_end_pending(eighth *e) {
    struct pending *p = e->pending;
    if (!p) return;
    end_guessing(p->g, p->thread, 1);
    free(p);
    e->pending = NULL;
}

// Takes the guesses, run after run in the data's order, until MCU row `limit` is whole and its
// pixels made; at the scan's end, the markers after it read and the guesser let go. 0 where the
// guesses do not reach it cleanly (the data ran out, a run began again or gave up, a marker out of
// place): libjpeg then says what is wrong.
int eighth_take_until(eighth *e, uint64_t limit) {
    struct pending *p = e->pending;
    struct guess *g = p->g;
    if (limit > p->mcus_high) limit = p->mcus_high;
    while (p->at.my < limit) {
        guess_run *run = &g->runs[p->run];
        int state = atomic_load_explicit(&run->state, memory_order_acquire);
        uint32_t published = atomic_load_explicit(&run->published, memory_order_acquire);
        if (p->run > 0 && state == RUN_JOINED && p->index == run->joins) {  // on into the next run
            p->index = run->into;
            p->run--;
            p->part = parts_before(g, p->run, p->index);
            p->first = 1;
            continue;
        }
        if (p->index >= published) {
            if (state != RUN_GOING) return 0;  // it stopped short
            sched_yield();
            continue;
        }
        uint32_t end = p->run > 0 && state == RUN_JOINED ? run->joins : published;
        for (; p->index < end && p->at.my < limit; p->index++, p->first = 0)
            if (!take_guess(&p->st, g, p->blocks, p->count, &p->at, &g->found[run->first + p->index], p->first, p->mcus_wide, &p->part)) return 0;
    }
    eighth_make_samples_rows(e, p->rows_made, p->at.my);
    p->rows_made = p->at.my;
    if (p->at.my < p->mcus_high) return 1;
    while (atomic_load_explicit(&g->runs[0].state, memory_order_acquire) == RUN_GOING) sched_yield();
    if (atomic_load_explicit(&g->runs[0].state, memory_order_acquire) != RUN_JOINED) return 0;
    reader last = g->last;  // at the end of the scan's data, in the guesser's copy
    int ok = eighth_read_to_end(&last, e, &p->s, &p->t, 0, 1, p->fatal_warning);
    eighth_end_pending(e);
    return ok;
}

static void end_guessing(struct guess *g, pthread_t thread, int started) {
    if (started) {
        atomic_store_explicit(&g->stop, 1, memory_order_relaxed);
        pthread_join(thread, NULL);
    }
    free(g->found);
    free(g->parts);
    free(g->copy);
    free(g);
}

// Starts the guesser and decodes here until in step with it: 2 then, the guesser and its thread
// in *kept and *kept_thread; 1 where this thread decoded the whole scan, 0 on bad data.
static int decode_split(scan_state *st, const eighth_more *more, uint32_t mcus_wide, uint32_t mcus_high, struct guess **kept,
                        pthread_t *kept_thread) {
    struct guess *g = calloc(1, sizeof *g);
    if (!g) return eighth_decode_sequential(st, mcus_wide, 0, mcus_high, 0);
    if (more->data) {
        g->data = more->data;
        g->end = more->data + more->length;
    } else {
        g->file = more->file;
        g->offset = more->offset;
        g->length = more->length;
    }
    g->count = mcu_layout(st, g->blocks);
    uint64_t total = (uint64_t)mcus_wide * mcus_high * (uint64_t)g->count;
    g->capacity = (uint32_t)(total + (MAX_RUNS + 1) * RUN_SLACK);  // every block, and what runs overlap by
    int squares = 0;
    for (int b = 0; b < g->count; b++) squares += g->blocks[b].c->square;
    g->parts_capacity = (uint32_t)((uint64_t)g->capacity * (uint64_t)squares / (uint64_t)g->count + 2 * MAX_RUNS);
    g->found = malloc((size_t)g->capacity * sizeof *g->found);
    g->parts = malloc((size_t)g->parts_capacity * sizeof *g->parts);
    pthread_t thread;
    int started = g->found && g->parts && tc_start_thread_beside(&thread, guess_blocks, g) == 0;
    st->guess = started ? g : NULL;
    memset(st->guess_cursor, 0, sizeof st->guess_cursor);
    int result = eighth_decode_sequential(st, mcus_wide, 0, mcus_high, 0);
    st->guess = NULL;
    if (result == 2) {  // only with the guesser started
        *kept = g;
        *kept_thread = thread;
        return 2;
    }
    end_guessing(g, thread, started);
    return result;
}

// MARK: A scan with restart markers on two threads
//
// At a restart marker the DC predictors start again from 0, so the data after one decodes on its
// own, exactly: no guessing. The second thread counts the markers from the start of the data
// (they are the only 0xFF bytes followed by 0xD0-0xD7), takes the one that begins the MCU row
// nearest the middle, and decodes from there to the end into the same planes while the first
// thread decodes up to it. The first thread then takes that marker itself, as it would alone:
// where anything does not agree, or the second thread stopped at bad data, it decodes the rest
// itself, so the pixels and errors are a one-thread decode's.

static uint64_t gcd(uint64_t a, uint64_t b) {
    while (b) {
        uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

uint64_t eighth_restart_boundary(uint32_t mcus_wide, uint32_t mcus_high, unsigned restart_interval) {
    uint64_t total = (uint64_t)mcus_wide * mcus_high, interval = restart_interval;
    if (interval == 0 || mcus_wide == 0) return 0;
    uint64_t step = interval / gcd(interval, mcus_wide) * mcus_wide;  // MCUs between restarts at a row's start
    uint64_t at = (total / 2 + step / 2) / step * step;
    return at > 0 && at < total && at >= total / 4 && total - at >= total / 4 ? at : 0;
}

typedef struct {
    const uint8_t *data;  // the caller's, or NULL: the file's (`more`)
    int file;
    uint64_t offset;
    size_t length;
    uint64_t markers;     // the marker to begin after: the data's markers-th (from 1)
    uint8_t *copy;        // what follows it, read from the file
    scan_state st;        // the first thread's after it prepared the scan, then this thread's own
    reader r;
    uint32_t mcus_wide, mcus_high, from_row;
    int restart_interval;
    int decoded;          // 1 where its rows were decoded cleanly
} second_half;

// Where the data's markers-th restart marker ends (bytes from the data's start), counting from
// `*count` markers already seen with the last byte an 0xFF (`*ff`) or not; 0 if not in these bytes.
// A marker out of its order, or any other marker (the end of the scan), stops the count (*count = UINT64_MAX).
static uint64_t marker_end(const uint8_t *bytes, size_t length, uint64_t base, uint64_t markers, uint64_t *count, int *ff) {
    for (size_t i = 0; i < length; i++) {
        if (!*ff) {
            const uint8_t *next = memchr(bytes + i, 0xFF, length - i);
            if (!next) return 0;
            i = (size_t)(next - bytes);
            *ff = 1;
            continue;
        }
        uint8_t b = bytes[i];
        if (b == 0xFF) continue;  // fill bytes before a marker
        *ff = 0;
        if (b == 0x00) continue;  // a stuffed 0xFF
        if (b < 0xD0 || b > 0xD7 || b != 0xD0 + (*count & 7)) {
            *count = UINT64_MAX;
            return 0;
        }
        if (++*count == markers) return base + i + 1;
    }
    return 0;
}

static void *decode_second_half(void *argument) {
    second_half *h = argument;
    uint64_t count = 0, after = 0;
    int ff = 0;
    if (h->data) {
        after = marker_end(h->data, h->length, 0, h->markers, &count, &ff);
        if (after) {
            h->r.p = h->data + after;
            h->r.n = h->length - after;
        }
    } else {
        // The file is read in order a window at a time until the marker, then what follows it
        // into a copy of its own (never mapped: a file cut short while read is an error, not a fault).
        uint8_t window[1 << 15];
        for (uint64_t at = 0; at < h->length && !after && count != UINT64_MAX;) {
            size_t want = h->length - at < sizeof window ? (size_t)(h->length - at) : sizeof window;
            ssize_t n = pread(h->file, window, want, (off_t)(h->offset + at));
            if (n <= 0) break;
            after = marker_end(window, (size_t)n, at, h->markers, &count, &ff);
            at += (uint64_t)n;
        }
        if (after) {
            size_t rest = h->length - after, got = 0;
            h->copy = malloc(rest ? rest : 1);
            while (h->copy && got < rest) {
                ssize_t n = pread(h->file, h->copy + got, rest - got, (off_t)(h->offset + after + got));
                if (n <= 0) break;
                got += (size_t)n;
            }
            if (!h->copy || got < rest) return NULL;
            h->r.p = h->copy;
            h->r.n = rest;
        }
    }
    if (!after) return NULL;
    h->r.in_memory = 1;
    h->st.r = &h->r;
    h->st.to_go = h->restart_interval;
    h->st.next_restart = (int)(h->markers & 7);
    h->decoded = eighth_decode_sequential(&h->st, h->mcus_wide, h->from_row, h->mcus_high, h->restart_interval) == 1 && !h->st.padded;
    return NULL;
}

// The whole scan of `p` (prepared), cut at a restart marker where eighth_restart_boundary finds
// one, and the markers after it read. 0 on bad data.
static int decode_at_restarts(eighth *e, struct pending *p, const eighth_more *more) {
    scan_state *st = &p->st;
    int interval = p->t.restart_interval;
    uint64_t at = eighth_restart_boundary(p->mcus_wide, p->mcus_high, (unsigned)interval);
    second_half *h = at ? calloc(1, sizeof *h) : NULL;
    pthread_t thread;
    if (h) {
        *h = (second_half){.data = more->data, .file = more->file, .offset = more->offset, .length = more->length,
                           .markers = at / (uint64_t)interval, .st = *st, .mcus_wide = p->mcus_wide, .mcus_high = p->mcus_high,
                           .from_row = (uint32_t)(at / p->mcus_wide), .restart_interval = interval};
        h->r.cinfo = p->r.cinfo;
        if (tc_start_thread_beside(&thread, decode_second_half, h) != 0) {
            free(h);
            h = NULL;
        }
    }
    int ok = eighth_decode_sequential(st, p->mcus_wide, 0, h ? h->from_row : p->mcus_high, interval) == 1;
    reader *end = &p->r;  // where the scan's data ends: the markers after it are read from there
    if (h) {
        // The marker the second thread began after, taken here as a one-thread decode would.
        ok = ok && eighth_restart(st, &st->next_restart);
        st->to_go = interval;
        pthread_join(thread, NULL);
        if (ok && h->decoded) {
            e->threads_used = 2;
            end = &h->r;
        } else if (ok) {
            ok = eighth_decode_sequential(st, p->mcus_wide, h->from_row, p->mcus_high, interval) == 1;
        }
    }
    ok = ok && !st->padded && eighth_read_to_end(end, e, &p->s, &p->t, 0, 1, p->fatal_warning);
    if (h) free(h->copy);
    free(h);
    return ok;
}

// A one-scan image from `r` (after its SOS header) on two threads. With restart markers it is cut
// at one and decoded whole here. Else guessed: where the threads met, the guesses still to take
// are kept in `e` (taken as rows are asked for); where the guesser never fell into step, this
// thread decoded the scan and the rest of the image is read here. 0 on bad data.
int eighth_split_decode(eighth *e, const reader *r, const scan *s, const tables *t, const eighth_more *more,
                        const int *fatal_warning) {
    struct pending *p = calloc(1, sizeof *p);
    if (!p) return 0;
    p->s = *s;
    p->t = *t;
    p->r = *r;
    p->fatal_warning = fatal_warning;
    scan_mcus(r->cinfo, &p->mcus_wide, &p->mcus_high);
    if (!eighth_prepare_scan(&p->r, e, &p->s, &p->t, 0, &p->st)) {
        free(p);
        return 0;
    }
    if (p->t.restart_interval) {
        int ok = decode_at_restarts(e, p, more);
        free(p);
        if (ok) eighth_make_samples(e);
        return ok;
    }
    int result = decode_split(&p->st, more, p->mcus_wide, p->mcus_high, &p->g, &p->thread);
    e->threads_used = result == 2 ? 2 : 1;
    if (result == 2) {
        e->pending = p;
        p->count = mcu_layout(&p->st, p->blocks);
        p->at = (block_place){p->st.from_phase, (uint32_t)(p->st.from_mcu % p->mcus_wide), (uint32_t)(p->st.from_mcu / p->mcus_wide)};
        p->run = p->st.guess_run;
        p->index = p->st.guess_index;
        p->part = parts_before(p->g, p->run, p->index);
        p->first = 1;
        eighth_make_samples_rows(e, 0, p->at.my);
        p->rows_made = p->at.my;
        return 1;
    }
    int ok = result == 1 && !p->st.padded && eighth_read_to_end(&p->r, e, &p->s, &p->t, 0, 1, fatal_warning);
    free(p);
    if (!ok) return 0;
    eighth_make_samples(e);
    return 1;
}

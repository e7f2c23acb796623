// A JPEG at 1/8 scale without libjpeg's per-block machinery.
//
// At scale_denom = 8 libjpeg-turbo still runs its whole decoder for every block (the coefficient
// buffer cleared, a function pointer per block, every scan of a progressive file kept in a
// coefficient array of the whole image) to keep one number a block: its DC coefficient. Here the
// Huffman data is walked once, the DC coefficients are kept, and libjpeg-turbo 2.1's own
// arithmetic (jidctred.c, jdcolor.c, jdmaster.c) turns them into the same pixels. A progressive
// file needs only its DC scans: its AC scans are skipped to their next marker. Anything unusual
// makes this decoder give up and the caller decode with libjpeg, so errors read as they always
// have. A sequential 4:2:0 image's chroma is scaled by libjpeg with a 2×2 IDCT of each block (its
// luma's blocks give one pixel, a chroma block four): the walk keeps the 25 coefficients that IDCT
// reads and applies the same arithmetic, which libjpeg-turbo's SIMD gives too within the ranges
// checked here. A progressive 4:2:0 image would need its AC scans: it is left to libjpeg.
// This file walks the data; eighth_split.c decodes a one-scan image on two threads and
// eighth_pixels.c makes the pixels (eighth_internal.h holds what they share).
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <limits.h>
#include <pthread.h>
#include <jpeglib.h>

#include "eighth_internal.h"

static const uint8_t end_of_image[2] = {0xFF, 0xD9};

// MARK: Bytes

static int fill_source(reader *r) {
    if (r->in_memory) {
        r->p = end_of_image;
        r->n = sizeof end_of_image;
        return 1;
    }
    r->src->next_input_byte = r->p;
    r->src->bytes_in_buffer = 0;
    // Our sources insert an end-of-image marker at the end of the data (and warn: the caller
    // checks the warning), so this always returns bytes.
    (*r->src->fill_input_buffer)(r->cinfo);
    r->p = r->src->next_input_byte;
    r->n = r->src->bytes_in_buffer;
    return r->n > 0;
}

static inline int byte(reader *r, uint8_t *c) {
    if (r->n == 0 && !fill_source(r)) return 0;
    *c = *r->p++;
    r->n--;
    return 1;
}

static int read16(reader *r, int *value) {
    uint8_t a, b;
    if (!byte(r, &a) || !byte(r, &b)) return 0;
    *value = (a << 8) | b;
    return 1;
}

// libjpeg's next_marker: bytes before a marker are skipped (libjpeg warns but goes on), fill
// bytes (0xFF 0xFF) are skipped, 0xFF 0x00 is data.
static int next_marker(reader *r) {
    uint8_t c;
    for (;;) {
        if (!byte(r, &c)) return 0;
        while (c != 0xFF)
            if (!byte(r, &c)) return 0;
        do {
            if (!byte(r, &c)) return 0;
        } while (c == 0xFF);
        if (c != 0) return c;
    }
}

// MARK: Bits

// Tops the buffer up to more than 56 bits. After a marker only zero bits follow, counted.
void eighth_fill_bits(reader *r) {
    // Whole bytes at once while the next eight hold no 0xFF (a marker or a stuffed byte).
    while (r->bits <= 48 && r->n >= 8 && !r->marker) {
        uint64_t word;
        memcpy(&word, r->p, 8);
        uint64_t inverted = ~word;
        if ((inverted - 0x0101010101010101ull) & ~inverted & 0x8080808080808080ull) break;
        int count = (63 - r->bits) >> 3;
        uint64_t bytes = __builtin_bswap64(word) >> (64 - 8 * count);
        r->buffer = (r->buffer << (8 * count)) | bytes;
        r->bits += 8 * count;
        r->loaded += (uint64_t)count;
        r->p += count;
        r->n -= (size_t)count;
    }
    while (r->bits <= 56) {
        uint8_t c;
        if (!r->marker) {
            if (r->n > 0 && *r->p != 0xFF) {
                c = *r->p++;
                r->n--;
            } else {
                if (!byte(r, &c)) c = 0;
                if (c == 0xFF) {
                    do {
                        if (!byte(r, &c)) c = 0xD9;
                    } while (c == 0xFF);
                    if (c == 0) c = 0xFF;
                    else {
                        r->marker = c;
                        continue;
                    }
                }
            }
        } else {
            c = 0;
            r->padding += 8;
            r->loaded--;  // not data
        }
        r->buffer = (r->buffer << 8) | c;
        r->bits += 8;
        r->loaded++;
    }
}

// MARK: Tables

// libjpeg's jpeg_make_d_derived_tbl, with its checks; 0 where libjpeg would stop with an error.
static int derive(const raw_table *raw, int dc, huffman *t) {
    if (!raw->defined) return 0;
    char size[257];
    uint32_t codes[257];
    int p = 0;
    for (int l = 1; l <= 16; l++) {
        int i = raw->bits[l];
        if (p + i > 256) return 0;
        while (i--) size[p++] = (char)l;
    }
    size[p] = 0;
    int count = p;
    uint32_t code = 0;
    int si = size[0];
    p = 0;
    while (size[p]) {
        while (size[p] == si) codes[p++] = code++;
        if (code >= (1u << si)) return 0;
        code <<= 1;
        si++;
    }
    p = 0;
    for (int l = 1; l <= 16; l++) {
        if (raw->bits[l]) {
            t->valoffset[l] = p - (int32_t)codes[p];
            p += raw->bits[l];
            t->maxcode[l] = (int32_t)codes[p - 1];
        } else {
            t->maxcode[l] = -1;
        }
    }
    t->valoffset[17] = 0;
    t->maxcode[17] = 0xFFFFF;
    memset(t->look, 0, sizeof t->look);
    p = 0;
    for (int l = 1; l <= LOOKAHEAD; l++) {
        for (int i = 1; i <= raw->bits[l]; i++, p++) {
            uint32_t first = codes[p] << (LOOKAHEAD - l);
            for (uint32_t k = 0; k < (1u << (LOOKAHEAD - l)); k++)
                t->look[first + k] = (uint16_t)((l << 8) | raw->values[p]);
        }
    }
    memcpy(t->values, raw->values, sizeof t->values);
    for (unsigned i = 0; i < (1u << LOOKAHEAD); i++) {
        unsigned e = t->look[i];
        int length = (int)(e >> 8), rs = (int)(e & 0xFF), run = rs >> 4, size = rs & 15;
        t->ac[i] = 0;
        if (!e || length + size > LOOKAHEAD) continue;
        if (size == 0) {
            t->ac[i] = ((run == 15 ? 16 : 64) << 8) | length;
            continue;
        }
        unsigned extra = (i >> (LOOKAHEAD - length - size)) & ((1u << size) - 1);
        t->ac[i] = (int32_t)((uint32_t)extend(extra, size) << 16) | ((run + 1) << 8) | (length + size);
    }
    if (dc)
        for (int i = 0; i < count; i++)
            if (raw->values[i] > 15) return 0;
    return 1;
}

static void copy_raw(const JHUFF_TBL *from, raw_table *to) {
    to->defined = from != NULL;
    if (!from) return;
    memcpy(to->bits, from->bits, sizeof to->bits);
    memcpy(to->values, from->huffval, sizeof to->values);
}

static int read_dht(reader *r, tables *t) {
    int length;
    if (!read16(r, &length)) return 0;
    length -= 2;
    while (length > 16) {
        uint8_t index, b;
        if (!byte(r, &index)) return 0;
        raw_table table = {.defined = 1};
        int count = 0;
        for (int i = 1; i <= 16; i++) {
            if (!byte(r, &b)) return 0;
            table.bits[i] = b;
            count += b;
        }
        length -= 17;
        if (count > 256 || count > length) return 0;
        for (int i = 0; i < count; i++)
            if (!byte(r, &table.values[i])) return 0;
        length -= count;
        if (index & 0x10) {
            if ((index & 0x0F) > 3 || (index & 0xE0)) return 0;
            t->ac[index & 0x0F] = table;
        } else {
            if (index > 3) return 0;
            t->dc[index] = table;
        }
    }
    return length == 0;
}

static int read_dqt(reader *r, tables *t) {
    int length;
    if (!read16(r, &length)) return 0;
    length -= 2;
    while (length > 0) {
        uint8_t n;
        if (!byte(r, &n)) return 0;
        int precision = n >> 4, index = n & 0x0F;
        if (index > 3 || precision > 1 || length < 1 + 64 * (precision + 1)) return 0;
        for (int i = 0; i < 64; i++) {
            int value;
            if (precision) {
                if (!read16(r, &value)) return 0;
            } else {
                uint8_t b;
                if (!byte(r, &b)) return 0;
                value = b;
            }
            t->quant[index][natural_order[i]] = (uint16_t)value;
        }
        t->quant_defined[index] = 1;
        length -= 1 + 64 * (precision + 1);
    }
    return length == 0;
}

static int read_dri(reader *r, tables *t) {
    int length, interval;
    if (!read16(r, &length) || length != 4 || !read16(r, &interval)) return 0;
    t->restart_interval = interval;
    return 1;
}

static int skip_segment(reader *r) {
    int length;
    if (!read16(r, &length) || length < 2) return 0;
    for (int i = 2; i < length; i++) {
        uint8_t b;
        if (!byte(r, &b)) return 0;
    }
    return 1;
}

// MARK: Scans

static int read_sos(reader *r, const eighth *e, scan *s) {
    int length;
    uint8_t n, b;
    if (!read16(r, &length) || !byte(r, &n)) return 0;
    if (n < 1 || n > 4 || length != n * 2 + 6) return 0;
    s->count = n;
    for (int i = 0; i < n; i++) {
        uint8_t id;
        if (!byte(r, &id) || !byte(r, &b)) return 0;
        int found = -1;
        for (int ci = 0; ci < e->count; ci++)
            if (e->c[ci].id == id) found = ci;
        if (found < 0) return 0;
        for (int j = 0; j < i; j++)
            if (s->index[j] == found) return 0;  // libjpeg renames a repeated id; not handled here
        s->index[i] = found;
        s->dc_table[i] = b >> 4;
        s->ac_table[i] = b & 0x0F;
    }
    uint8_t ss, se, a;
    if (!byte(r, &ss) || !byte(r, &se) || !byte(r, &a)) return 0;
    s->ss = ss;
    s->se = se;
    s->ah = a >> 4;
    s->al = a & 0x0F;
    return 1;
}

// libjpeg's process_restart: the rest of the byte dropped, the next marker must be the expected RSTn.
int eighth_restart(scan_state *st, int *next) {
    reader *r = st->r;
    if (r->padding > r->bits) st->padded = 1;
    int m = r->marker ? r->marker : next_marker(r);
    if (m != 0xD0 + *next) return 0;
    *next = (*next + 1) & 7;
    r->marker = 0;
    r->bits = 0;
    r->buffer = 0;
    r->padding = 0;
    for (int k = 0; k < 4; k++) st->predictor[k] = 0;
    return 1;
}

// A sequential scan: each block's DC kept, its AC codes walked to find the block's end. With a
// guessing thread (st->guess), returns 2 where its blocks are found to be this scan's from the
// block at st->from_mcu and st->from_phase on: the caller takes them from there.
int eighth_decode_sequential(scan_state *st, uint32_t mcus_wide, uint32_t from, uint32_t to, int restart_interval) {
    reader *r = st->r;
    const scan *s = st->s;
    mcu_block blocks[10];
    int count = mcu_layout(st, blocks);
    uint64_t buffer;
    int bits;
    LOAD_BITS();
    for (uint32_t my = from; my < to; my++) {
        if (st->guess) eighth_watch_guesses(st, r);
        for (uint32_t mx = 0; mx < mcus_wide; mx++) {
            if (restart_interval) {
                if (st->to_go == 0) {
                    SAVE_BITS();
                    if (!eighth_restart(st, &st->next_restart)) return 0;
                    LOAD_BITS();
                    st->to_go = restart_interval;
                }
                st->to_go--;
            }
            for (int b = 0; b < count; b++) {
                const mcu_block *m = &blocks[b];
                component *c = m->c;
                if (st->guess && r->loaded * 8 - (uint64_t)bits >= st->guess_watch && eighth_in_step(st, r->loaded * 8 - (uint64_t)bits, b)) {
                    SAVE_BITS();
                    st->from_mcu = (uint64_t)my * mcus_wide + mx;
                    st->from_phase = b;
                    return 2;
                }
                uint32_t bx = mx * (uint32_t)(s->count == 1 ? 1 : c->h) + m->x;
                uint32_t by = (my - st->row_base) * (uint32_t)(s->count == 1 ? 1 : c->v) + m->y;
                int diff;
                WALK_DC(diff, m->dc);
                unsigned sum = (unsigned)st->predictor[m->k] + (unsigned)diff;  // libjpeg lets it wrap
                st->predictor[m->k] = (int)sum;
                if (c->square) {
                    int16_t values[64] = {0}, *coef = values;
                    int any = 0;
                    WALK_AC(m->ac, coef, any);
                    size_t stride = 2 * (size_t)c->plane_wide;
                    square_part part = {0, 0, {0, 0}};  // a block of its DC alone
                    if ((any && !square_part_of(coef, c->quant, &part)) ||
                        !square_finish((int16_t)sum, c->quant[0], &part, c->samples + 2 * (size_t)by * stride + 2 * (size_t)bx, stride))
                        return 0;
                    continue;
                }
                c->dc[(size_t)by * c->plane_wide + bx] = (int16_t)sum;
                int16_t *none = NULL;
                int any = 0;
                WALK_AC(m->ac, none, any);
                (void)any;
            }
            if (r->padding > bits) return 0;  // libjpeg would have warned that the data ran out
        }
    }
    SAVE_BITS();
    return 1;
}

// One block of a progressive DC scan.
static inline int progressive_block(scan_state *st, int k, component *c, uint32_t bx, uint32_t by) {
    reader *r = st->r;
    if (r->bits < 32) eighth_fill_bits(r);
    int16_t *dc = &c->dc[(size_t)by * c->plane_wide + bx];
    if (st->s->ah == 0) {
        int s = decode(r, &st->dc[st->s->dc_table[k]]);
        if (s < 0) return 0;
        if (s) s = receive(r, s);
        int last = st->predictor[k];
        if ((last >= 0 && s > INT_MAX - last) || (last < 0 && s < INT_MIN - last)) return 0;  // libjpeg: an error
        st->predictor[k] = last + s;
        *dc = (int16_t)(int)((unsigned)(last + s) << st->s->al);
    } else {
        if (peek(r, 1)) *dc = (int16_t)(*dc | (1 << st->s->al));
        r->bits -= 1;
    }
    return 1;
}

static int decode_scan(scan_state *st, int progressive, int restart_interval) {
    reader *r = st->r;
    eighth *e = st->e;
    const scan *s = st->s;
    uint32_t mcus_wide, mcus_high;
    if (s->count == 1) {
        mcus_wide = e->c[s->index[0]].blocks_wide;
        mcus_high = e->c[s->index[0]].blocks_high;
    } else {
        mcus_wide = mcu_count(r->cinfo->image_width, e->max_h);
        mcus_high = mcu_count(r->cinfo->image_height, e->max_v);
    }
    if (!progressive) return eighth_decode_sequential(st, mcus_wide, 0, mcus_high, restart_interval);
    int to_go = restart_interval, next = 0;
    for (uint32_t my = 0; my < mcus_high; my++) {
        for (uint32_t mx = 0; mx < mcus_wide; mx++) {
            if (restart_interval) {
                if (to_go == 0) {
                    if (!eighth_restart(st, &next)) return 0;
                    to_go = restart_interval;
                }
                to_go--;
            }
            for (int k = 0; k < s->count; k++) {
                component *c = &e->c[s->index[k]];
                int h = s->count == 1 ? 1 : c->h, v = s->count == 1 ? 1 : c->v;
                for (int y = 0; y < v; y++) {
                    for (int x = 0; x < h; x++) {
                        uint32_t bx = mx * (uint32_t)h + (uint32_t)x, by = my * (uint32_t)v + (uint32_t)y;
                        if (!progressive_block(st, k, c, bx, by)) return 0;
                    }
                }
            }
            if (r->padding > r->bits) return 0;  // libjpeg would have warned that the data ran out
        }
    }
    if (r->padding > r->bits) return 0;
    return 1;
}

// libjpeg's checks of a progressive scan (start_pass_phuff_decoder): 0 where it errors or warns.
static int check_progression(eighth *e, const scan *s) {
    int dc_band = s->ss == 0;
    if (dc_band ? s->se != 0 : (s->ss > s->se || s->se >= 64 || s->count != 1)) return 0;
    if (s->ah != 0 && s->al != s->ah - 1) return 0;
    if (s->al > 13) return 0;
    for (int k = 0; k < s->count; k++) {
        int *bits = e->c[s->index[k]].coef_bits;
        if (!dc_band && bits[0] < 0) return 0;
        for (int i = s->ss; i <= s->se; i++) {
            int expected = bits[i] < 0 ? 0 : bits[i];
            if (s->ah != expected) return 0;
            bits[i] = s->al;
        }
    }
    return 1;
}

// Skips an AC scan of a progressive file: to the next marker that is not a restart.
static int skip_scan(reader *r) {
    for (;;) {
        int m = next_marker(r);
        if (m == 0) return 0;
        if (m < 0xD0 || m > 0xD7) return m;
    }
}

// MARK: The image

// The blocks setup() allocates: each component's padded to whole MCUs.
static uint64_t blocks_needed(j_decompress_ptr cinfo) {
    uint64_t mcus_wide = mcu_count(cinfo->image_width, cinfo->max_h_samp_factor);
    uint64_t mcus_high = mcu_count(cinfo->image_height, cinfo->max_v_samp_factor);
    if (cinfo->num_components == 1) return ((cinfo->image_width + 7u) / 8) * (uint64_t)((cinfo->image_height + 7u) / 8);
    uint64_t total = 0;
    for (int ci = 0; ci < cinfo->num_components; ci++)
        total += mcus_wide * (uint64_t)cinfo->comp_info[ci].h_samp_factor * mcus_high * (uint64_t)cinfo->comp_info[ci].v_samp_factor;
    return total;
}

int eighth_eligible(j_decompress_ptr cinfo) {
    if (cinfo->data_precision != 8 || cinfo->arith_code || cinfo->CCIR601_sampling) return 0;
    if (cinfo->image_width == 0 || cinfo->image_height == 0) return 0;
    if (cinfo->num_components != 1 && cinfo->num_components != 3) return 0;
    int one_scan = !cinfo->progressive_mode && cinfo->comps_in_scan == cinfo->num_components;
    if (!one_scan && blocks_needed(cinfo) > MAX_BLOCKS) return 0;
    if (cinfo->num_components == 1) return cinfo->jpeg_color_space == JCS_GRAYSCALE;
    if (cinfo->num_components != 3 || cinfo->jpeg_color_space != JCS_YCbCr) return 0;
    const jpeg_component_info *c = cinfo->comp_info;
    if (c[1].h_samp_factor != 1 || c[1].v_samp_factor != 1 || c[2].h_samp_factor != 1 || c[2].v_samp_factor != 1)
        return 0;
    // 4:4:4 and 4:2:2; 4:2:0 in one sequential scan (its chroma's 2×2 IDCT needs AC coefficients,
    // which a progressive file's AC scans would give).
    if (c[0].h_samp_factor == 2 && c[0].v_samp_factor == 2) return one_scan;
    return c[0].v_samp_factor == 1 && (c[0].h_samp_factor == 1 || c[0].h_samp_factor == 2);
}

uint64_t eighth_held_bytes(j_decompress_ptr cinfo) {
    int one_scan = !cinfo->progressive_mode && cinfo->comps_in_scan == cinfo->num_components;
    return one_scan ? 0 : 3 * blocks_needed(cinfo);  // an int16_t DC and a sample a block
}

static int setup(eighth *e, j_decompress_ptr cinfo) {
    e->count = cinfo->num_components;
    e->width = (cinfo->image_width + 7) / 8;
    e->height = (cinfo->image_height + 7) / 8;
    e->max_h = cinfo->max_h_samp_factor;
    e->max_v = cinfo->max_v_samp_factor;
    for (int ci = 0; ci < e->count; ci++) {
        const jpeg_component_info *info = &cinfo->comp_info[ci];
        component *c = &e->c[ci];
        c->h = e->count == 1 ? 1 : info->h_samp_factor;
        c->v = e->count == 1 ? 1 : info->v_samp_factor;
        c->id = info->component_id;
        c->table = info->quant_tbl_no;
        if (c->table < 0 || c->table > 3) return 0;
        uint64_t hs = (uint64_t)info->h_samp_factor, vs = (uint64_t)info->v_samp_factor;
        c->blocks_wide = (uint32_t)((cinfo->image_width * hs + 8u * e->max_h - 1) / (8u * e->max_h));
        c->blocks_high = (uint32_t)((cinfo->image_height * vs + 8u * e->max_v - 1) / (8u * e->max_v));
        if (e->count == 1) {
            c->blocks_wide = (cinfo->image_width + 7) / 8;
            c->blocks_high = (cinfo->image_height + 7) / 8;
        }
        uint32_t mcus_wide = mcu_count(cinfo->image_width, e->max_h), mcus_high = mcu_count(cinfo->image_height, e->max_v);
        c->plane_wide = e->count == 1 ? c->blocks_wide : mcus_wide * (uint32_t)c->h;
        c->plane_high = e->count == 1 ? c->blocks_high : mcus_high * (uint32_t)c->v;
        if (e->stream) c->plane_high = (uint32_t)c->v;  // one MCU row
        c->square = e->max_v == 2 && ci > 0;
        uint64_t blocks = (uint64_t)c->plane_wide * c->plane_high;  // within MAX_BLOCKS: eighth_eligible checked
        c->dc = calloc(blocks ? blocks : 1, sizeof(int16_t));
        c->samples = malloc(blocks ? (c->square ? 4 * blocks : blocks) : 1);
        if (!c->dc || !c->samples) return 0;
        for (int i = 0; i < 64; i++) c->coef_bits[i] = -1;
    }
    return 1;
}

static int latch(component *c, const tables *t) {
    if (c->latched) return 1;
    if (!t->quant_defined[c->table]) return 0;
    for (int i = 0; i < 64; i++) c->quant[i] = (int16_t)t->quant[c->table][i];
    c->latched = 1;
    return 1;
}

// A scan's checks (libjpeg's), its tables derived, the reader at its data. 0 where libjpeg would stop.
int eighth_prepare_scan(reader *r, eighth *e, const scan *s, tables *t, int progressive, scan_state *st) {
    memset(st->predictor, 0, sizeof st->predictor);
    st->r = r;
    st->e = e;
    st->s = s;
    st->padded = 0;
    st->to_go = t->restart_interval;
    st->next_restart = 0;
    st->row_base = 0;
    st->guess = NULL;
    st->guess_index = 0;
    st->guess_watch = UINT64_MAX;
    if (!progressive && (s->ss != 0 || s->se != 63 || s->ah != 0 || s->al != 0)) return 0;
    if (progressive && !check_progression(e, s)) return 0;
    for (int k = 0; k < s->count; k++) {
        component *c = &e->c[s->index[k]];
        if (!latch(c, t)) return 0;
        c->seen = 1;
        int dc_needed = !progressive || (s->ss == 0 && s->ah == 0), ac_needed = !progressive || s->ss > 0;
        // libjpeg checks a table's number only where the scan uses the table.
        if ((dc_needed && s->dc_table[k] > 3) || (ac_needed && s->ac_table[k] > 3)) return 0;
        if (dc_needed && !derive(&t->dc[s->dc_table[k]], 1, &st->dc[s->dc_table[k]])) return 0;
        if (ac_needed && !derive(&t->ac[s->ac_table[k]], 0, &st->ac[s->ac_table[k]])) return 0;
    }
    if (s->count > 1) {
        int blocks = 0;
        for (int k = 0; k < s->count; k++) blocks += e->c[s->index[k]].h * e->c[s->index[k]].v;
        if (blocks > 10) return 0;
    }
    r->bits = 0;
    r->buffer = 0;
    r->padding = 0;
    r->marker = 0;
    return 1;
}

static int run_scan(reader *r, eighth *e, const scan *s, tables *t, int progressive) {
    scan_state st;
    if (!eighth_prepare_scan(r, e, s, t, progressive, &st)) return 0;
    if (progressive && s->ss > 0) {
        int m = skip_scan(r);
        if (!m) return 0;
        r->marker = m;
        return 1;
    }
    if (!decode_scan(&st, progressive, t->restart_interval) || st.padded) return 0;
    return 1;
}

// After the scans that were decoded: the markers to the end of the image, any further scans
// decoded (`one_scan`: libjpeg stops at a second one).
int eighth_read_to_end(reader *r, eighth *e, scan *s, tables *t, int progressive, int one_scan, const int *fatal_warning) {
    for (;;) {
        int m = r->marker ? r->marker : next_marker(r);
        r->marker = 0;
        if (m == 0xD9) break;
        int ok;
        switch (m) {
        case 0xDA:
            ok = !one_scan && read_sos(r, e, s) && run_scan(r, e, s, t, progressive);
            break;
        case 0xC4: ok = read_dht(r, t); break;
        case 0xDB: ok = read_dqt(r, t); break;
        case 0xDD: ok = read_dri(r, t); break;
        case 0xD0: case 0xD1: case 0xD2: case 0xD3: case 0xD4: case 0xD5: case 0xD6: case 0xD7: ok = 1; break;
        default:
            ok = (m >= 0xE0 && m <= 0xEF) || m == 0xFE ? skip_segment(r) : 0;
        }
        if (!ok || *fatal_warning) return 0;
    }
    if (*fatal_warning) return 0;
    for (int ci = 0; ci < e->count; ci++)
        if (!e->c[ci].seen) return 0;
    return 1;
}

struct stream {
    reader r;
    scan s;
    tables t;
    scan_state st;
    uint32_t mcus_wide, mcus_high, next_row;
    uint32_t mcu_rows;  // decoded
    uint32_t tall;      // output rows an MCU row gives: 2 for 4:2:0, else 1
    const int *fatal_warning;
};

// Whether eighth_decode would decode the image on two threads, given `length` bytes in memory.
static int splits(j_decompress_ptr cinfo, uint64_t length) {
    int one_scan = !cinfo->progressive_mode && cinfo->comps_in_scan == cinfo->num_components;
    if (!one_scan || length < SPLIT_MIN_BYTES || length > SPLIT_MAX_BYTES || blocks_needed(cinfo) > SPLIT_MAX_BLOCKS) return 0;
    if (cinfo->restart_interval == 0) return 1;
    uint32_t wide, high;
    scan_mcus(cinfo, &wide, &high);
    return eighth_restart_boundary(wide, high, cinfo->restart_interval) > 0;
}

int eighth_takes(j_decompress_ptr cinfo, uint64_t length) {
    if (!eighth_eligible(cinfo)) return 0;
    // 4:2:0 on one thread is slower here than in libjpeg-turbo (its chroma's IDCT in SIMD).
    int square = cinfo->num_components == 3 && cinfo->comp_info[0].v_samp_factor == 2;
    return !square || splits(cinfo, length);
}

eighth *eighth_decode(j_decompress_ptr cinfo, int *fatal_warning, const eighth_more *more) {
    // Decoders on several threads (an in-process warm) may start at once: the tables are made once.
    static pthread_once_t tables_made = PTHREAD_ONCE_INIT;
    pthread_once(&tables_made, eighth_make_tables);
    int progressive = cinfo->progressive_mode;
    // A sequential image whose first scan holds every component has one scan (libjpeg stops at a
    // second): it is decoded as its rows are asked for, in planes one MCU row high.
    int one_scan = !progressive && cinfo->comps_in_scan == cinfo->num_components;
    // On two threads, held whole: a one-scan image without restart markers, its data in memory.
    int split = more && splits(cinfo, more->length);
    eighth *e = calloc(1, sizeof *e);
    tables *t = calloc(1, sizeof *t);
    struct stream *stream = one_scan && !split ? calloc(1, sizeof *stream) : NULL;
    if (!e || !t || (one_scan && !split && !stream)) goto fail;
    e->stream = stream;
    if (!setup(e, cinfo)) goto fail;
    e->tall = e->count == 1 ? 1 : (uint32_t)e->max_v;
    for (int i = 0; i < 4; i++) {
        copy_raw(cinfo->dc_huff_tbl_ptrs[i], &t->dc[i]);
        copy_raw(cinfo->ac_huff_tbl_ptrs[i], &t->ac[i]);
        if (cinfo->quant_tbl_ptrs[i]) {
            memcpy(t->quant[i], cinfo->quant_tbl_ptrs[i]->quantval, sizeof t->quant[i]);
            t->quant_defined[i] = 1;
        }
    }
    t->restart_interval = (int)cinfo->restart_interval;
    reader r = {.cinfo = cinfo, .src = cinfo->src, .p = cinfo->src->next_input_byte, .n = cinfo->src->bytes_in_buffer};
    scan s = {.count = cinfo->comps_in_scan, .ss = cinfo->Ss, .se = cinfo->Se, .ah = cinfo->Ah, .al = cinfo->Al};
    for (int k = 0; k < s.count; k++) {
        s.index[k] = cinfo->cur_comp_info[k]->component_index;
        s.dc_table[k] = cinfo->cur_comp_info[k]->dc_tbl_no;
        s.ac_table[k] = cinfo->cur_comp_info[k]->ac_tbl_no;
    }
    if (one_scan && !split) {
        stream->r = r;
        stream->s = s;
        stream->t = *t;
        stream->fatal_warning = fatal_warning;
        scan_mcus(cinfo, &stream->mcus_wide, &stream->mcus_high);
        stream->tall = e->count == 1 ? 1 : (uint32_t)e->max_v;
        if (!eighth_prepare_scan(&stream->r, e, &stream->s, &stream->t, 0, &stream->st)) goto fail;
        free(t);
        return e;
    }
    if (split) {
        if (!eighth_split_decode(e, &r, &s, t, more, fatal_warning)) goto fail;
        free(t);
        return e;
    }
    if (!run_scan(&r, e, &s, t, progressive)) goto fail;
    if (!eighth_read_to_end(&r, e, &s, t, progressive, 0, fatal_warning)) goto fail;
    eighth_make_samples(e);
    free(t);
    return e;
fail:
    free(t);
    eighth_free(e);
    return NULL;
}

uint32_t eighth_width(const eighth *e) { return e->width; }
int eighth_threads_used(const eighth *e) { return e->threads_used ? e->threads_used : 1; }
uint32_t eighth_height(const eighth *e) { return e->height; }

int eighth_row(eighth *e, uint32_t y, uint8_t *row) {
    struct stream *stream = e->stream;
    if (!stream) {
        if (e->pending && !eighth_take_until(e, (uint64_t)y / e->tall + 1)) return 0;
        eighth_compose(e, y, row);
        return 1;
    }
    if (y != stream->next_row) return 0;
    uint32_t mcu_row = y / stream->tall;
    if (mcu_row == stream->mcu_rows) {
        stream->st.row_base = mcu_row;
        if (!eighth_decode_sequential(&stream->st, stream->mcus_wide, mcu_row, mcu_row + 1, stream->t.restart_interval)) return 0;
        eighth_make_samples(e);
        stream->mcu_rows++;
    }
    stream->next_row++;
    eighth_compose(e, y % stream->tall, row);
    return 1;
}

int eighth_finish(eighth *e) {
    struct stream *stream = e->stream;
    if (!stream) return e->pending ? eighth_take_until(e, UINT64_MAX) : 1;
    if (stream->mcu_rows != stream->mcus_high || stream->st.padded) return 0;
    return eighth_read_to_end(&stream->r, e, &stream->s, &stream->t, 0, 1, stream->fatal_warning);
}

void eighth_free(eighth *e) {
    if (!e) return;
    eighth_end_pending(e);
    for (int ci = 0; ci < 3; ci++) {
        free(e->c[ci].dc);
        free(e->c[ci].samples);
    }
    free(e->stream);
    free(e);
}

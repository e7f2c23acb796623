// Included by cpng_read.c once per instruction set (UNFILTER_TARGET, UNFILTER(name)): the same
// intrinsics compiled with AVX2's VEX encoding (three-operand forms, no moves around the blends)
// decoded Paeth-filtered RGB and RGBA PNGs 1.5–1.9× faster here; SSE4.1 stays for older CPUs.

// Pixels of 3 to 8 bytes (RGB, RGBA, and both at 16 bits) a pixel at a time, the pixel's bytes
// side by side in 16-bit lanes: Sub, Average and Paeth depend on the pixel to the left, so the
// width of a pixel is the parallelism, and the chain from one pixel to the next is the cost.
UNFILTER_TARGET static inline __m128i UNFILTER(load_pixel)(const uint8_t *p, size_t bpp) {
    uint64_t v = 0;
    memcpy(&v, p, bpp);
    return _mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long)v));
}

UNFILTER_TARGET static inline void UNFILTER(store_pixel)(uint8_t *p, __m128i v, size_t bpp) {
    uint64_t x = (uint64_t)_mm_cvtsi128_si64(_mm_packus_epi16(v, v));
    memcpy(p, &x, bpp);
}

UNFILTER_TARGET static inline void UNFILTER(unfilter_pixels)(int filter, uint8_t *row, const uint8_t *above, size_t n, size_t bpp) {
    const __m128i low = _mm_set1_epi16(0xff);
    __m128i a = _mm_setzero_si128(), c = a;  // the pixel to the left, and the one above that
    switch (filter) {
    case 1:
        for (size_t i = 0; i < n; i += bpp) {
            a = _mm_and_si128(_mm_add_epi16(a, UNFILTER(load_pixel)(row + i, bpp)), low);
            UNFILTER(store_pixel)(row + i, a, bpp);
        }
        break;
    case 3:
        for (size_t i = 0; i < n; i += bpp) {
            __m128i b = UNFILTER(load_pixel)(above + i, bpp);
            a = _mm_and_si128(_mm_add_epi16(_mm_srli_epi16(_mm_add_epi16(a, b), 1), UNFILTER(load_pixel)(row + i, bpp)), low);
            UNFILTER(store_pixel)(row + i, a, bpp);
        }
        break;
    case 4:
        // What does not depend on the pixel to the left is computed beside the chain: the distance
        // from b to c, and the results were b or c chosen. On the chain: a's distances, two
        // comparisons, two blends.
        for (size_t i = 0; i < n; i += bpp) {
            __m128i b = UNFILTER(load_pixel)(above + i, bpp), x = UNFILTER(load_pixel)(row + i, bpp);
            __m128i toward_b = _mm_sub_epi16(b, c), pa = _mm_abs_epi16(toward_b);
            __m128i with_b = _mm_add_epi16(b, x), with_c = _mm_add_epi16(c, x);
            __m128i toward_a = _mm_sub_epi16(a, c), with_a = _mm_add_epi16(a, x);
            __m128i pb = _mm_abs_epi16(toward_a), pc = _mm_abs_epi16(_mm_add_epi16(toward_b, toward_a));
            __m128i not_a = _mm_or_si128(_mm_cmpgt_epi16(pa, pb), _mm_cmpgt_epi16(pa, pc));
            __m128i b_or_c = _mm_blendv_epi8(with_b, with_c, _mm_cmpgt_epi16(pb, pc));
            a = _mm_and_si128(_mm_blendv_epi8(with_a, b_or_c, not_a), low);
            UNFILTER(store_pixel)(row + i, a, bpp);
            c = b;
        }
        break;
    }
}

// One copy per pixel size, so that each pixel's loads and stores are single moves.
UNFILTER_TARGET static void UNFILTER(unfilter_vector)(int filter, uint8_t *row, const uint8_t *above, size_t n, size_t bpp) {
    switch (bpp) {
    case 3: UNFILTER(unfilter_pixels)(filter, row, above, n, 3); break;
    case 4: UNFILTER(unfilter_pixels)(filter, row, above, n, 4); break;
    case 6: UNFILTER(unfilter_pixels)(filter, row, above, n, 6); break;
    default: UNFILTER(unfilter_pixels)(filter, row, above, n, 8); break;
    }
}


/* The plain strtod C parser the parse benchmark measures optc's reader against: LIBSVM text
 * (`label idx:val ...`, `#` comments) into CSR arrays with getline, strtod and strtol, the way
 * LIBLINEAR's read_problem does it. No checks beyond what strtol/strtod do, one thread.
 *
 *     cc -O2 -o parse_ref parse_ref.c && ./parse_ref FILE
 *
 * prints `seconds rows nnz bytes checksum cpu_seconds` (the times cover reading and parsing, from open to
 * the last row; the checksum keeps the compiler from skipping work and lets the bench compare
 * the sum of the values with optc's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static void *grow(void *p, size_t *cap, size_t elem) {
    *cap = *cap ? 2 * *cap : 1 << 16;
    p = realloc(p, *cap * elem);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: parse_ref FILE\n");
        return 2;
    }
    double t0 = now();
    clock_t c0 = clock();
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    size_t rows = 0, rcap = 0, nnz = 0, ncap = 0, bytes = 0;
    size_t *indptr = NULL;
    double *labels = NULL;
    unsigned *indices = NULL;
    double *values = NULL;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t n;
    while ((n = getline(&line, &lcap, f)) > 0) {
        bytes += (size_t)n;
        char *hash = memchr(line, '#', (size_t)n);
        if (hash) *hash = '\0';
        char *p = line, *end;
        double label = strtod(p, &end);
        if (end == p) continue; /* blank or comment line */
        p = end;
        for (;;) {
            long idx = strtol(p, &end, 10);
            if (end == p || *end != ':') break;
            p = end + 1;
            double v = strtod(p, &end);
            if (end == p) break;
            p = end;
            if (nnz == ncap) {
                size_t c = ncap;
                indices = grow(indices, &c, sizeof *indices);
                values = grow(values, &ncap, sizeof *values);
            }
            indices[nnz] = (unsigned)(idx - 1);
            values[nnz++] = v;
        }
        if (rows + 1 >= rcap) {
            size_t c = rcap;
            labels = grow(labels, &c, sizeof *labels);
            indptr = grow(indptr, &rcap, sizeof *indptr);
        }
        if (rows == 0) indptr[0] = 0;
        labels[rows] = label;
        indptr[++rows] = nnz;
    }
    fclose(f);
    double t = now() - t0;
    double cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
    double sum = 0;
    for (size_t k = 0; k < nnz; k++) sum += values[k];
    printf("%.6f %zu %zu %zu %.17g %.6f\n", t, rows, nnz, bytes, sum, cpu);
    return 0;
}

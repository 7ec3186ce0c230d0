/* Reference epochs in plain C: the exact work of optc's l1-logistic epochs, to measure what the
 * JIT leaves on the table (benches/epochs.rs compiles this with `cc -O3 -march=native
 * -ffp-contract=off`, feeds it the data and the orders, and compares the weights).
 *
 *   fobos  the lazy FOBOS epoch (src/plan/lower/fobos, as benches/jit.rs's hand loop): per row
 *          in the given order, catch each of the row's weights up on the l1 shrinkage it missed
 *          (soft by big − last[j]), a = ⟨x, w⟩, g = −y·σ(−y·a), big += η·λ, then
 *          w[j] = soft(w[j] − η·g·x_j, η·λ), last[j] = big; η = η₀/√t.
 *   scd    the first-order SCD epoch (`solve with scd(newton = 0)`, src/plan/lower/scd.rs): per
 *          column in the given order, gⱼ = (c/m)·Σᵢ xᵢⱼ·(−yᵢ)·σ(−yᵢ·zᵢ),
 *          wn = soft(wⱼ − gⱼ/βⱼ, (1/βⱼ)·λ), δ = wn − wⱼ, and if δ ≠ 0: wⱼ = wn, z += δ·x_:j.
 *          Its init computes βⱼ = κ·Σᵢ xᵢⱼ² and z = Xw (w = 0), untimed.
 *
 * No fast-math and no FMA contraction: the arithmetic is optc's, operation for operation, so
 * the weights agree with the JIT's bit for bit (up to the libm exp both call).
 *
 * Input (native endian): u64 m, d, nnz, epochs; f64 eta0, l1 (FOBOS), kappa, c_over_m, lambda
 * (SCD); u64 indptr[m+1]; u32 indices[nnz]; f64 values[nnz]; f64 labels[m] (±1);
 * u64 colptr[d+1]; u32 rows[nnz]; f64 colvalues[nnz]; u32 row_orders[epochs][m];
 * u32 col_orders[epochs][d].
 * Output: one line per epoch kind on stdout, "kind best_epoch_seconds", and the weights
 * after the first and after the last epoch of each kind to the output file (f64[d] × 4:
 * fobos first, fobos last, scd first, scd last).
 *
 *     ref_epochs INPUT OUTPUT
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* optc::symbolic::sigmoid: the branch keeps exp's argument ≤ 0. */
static inline double sigmoid(double u) {
    if (u >= 0.0) return 1.0 / (1.0 + exp(-u));
    double e = exp(u);
    return e / (1.0 + e);
}

/* optc::plan::soft */
static inline double soft(double v, double tau) {
    if (v > tau) return v - tau;
    if (v < -tau) return v + tau;
    return 0.0;
}

static void *slurp(FILE *f, size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p || fread(p, 1, bytes, f) != bytes) {
        fprintf(stderr, "ref_epochs: short input (%zu bytes wanted)\n", bytes);
        exit(1);
    }
    return p;
}

typedef struct {
    uint64_t m, d, nnz, epochs;
    double eta0, l1, kappa, c_over_m, lambda;
    const uint64_t *indptr;
    const uint32_t *indices;
    const double *values, *labels;
    const uint64_t *colptr;
    const uint32_t *rows;
    const double *colvalues;
    const uint32_t *row_orders, *col_orders;
} Input;

typedef struct {
    double *w, *last, big, t;
} Fobos;

static void fobos_epoch(const Input *in, Fobos *s, const uint32_t *order) {
    double *restrict w = s->w, *restrict last = s->last;
    const double eta0 = in->eta0, l1 = in->l1;
    double big = s->big, t = s->t;
    for (uint64_t k = 0; k < in->m; k++) {
        uint64_t i = order[k];
        t += 1.0;
        double eta = eta0 / sqrt(t);
        uint64_t lo = in->indptr[i], hi = in->indptr[i + 1];
        double a = 0.0;
        for (uint64_t p = lo; p < hi; p++) {
            uint32_t j = in->indices[p];
            double wj = soft(w[j], big - last[j]);
            w[j] = wj;
            a += in->values[p] * wj;
        }
        double y = in->labels[i];
        double g = -y * sigmoid(-y * a);
        big += eta * l1;
        double step = eta * g, tau = eta * l1;
        for (uint64_t p = lo; p < hi; p++) {
            uint32_t j = in->indices[p];
            w[j] = soft(w[j] - step * in->values[p], tau);
            last[j] = big;
        }
    }
    s->big = big;
    s->t = t;
}

typedef struct {
    double *w, *z, *betaj;
} Scd;

static void scd_init(const Input *in, Scd *s) {
    for (uint64_t i = 0; i < in->m; i++) s->z[i] = 0.0;
    for (uint64_t j = 0; j < in->d; j++) {
        double q = 0.0;
        for (uint64_t p = in->colptr[j]; p < in->colptr[j + 1]; p++) {
            double v = in->colvalues[p];
            q = q + v * v;
            s->z[in->rows[p]] = s->z[in->rows[p]] + v * s->w[j];
        }
        s->betaj[j] = in->kappa * q;
    }
}

static void scd_epoch(const Input *in, Scd *s, const uint32_t *order) {
    double *restrict w = s->w, *restrict z = s->z;
    const double *restrict betaj = s->betaj;
    const double c_over_m = in->c_over_m, lambda = in->lambda;
    for (uint64_t k = 0; k < in->d; k++) {
        uint64_t j = order[k];
        if (!(betaj[j] > 0.0)) continue;
        uint64_t lo = in->colptr[j], hi = in->colptr[j + 1];
        double g = 0.0;
        for (uint64_t p = lo; p < hi; p++) {
            uint32_t i = in->rows[p];
            double y = in->labels[i];
            g = g + in->colvalues[p] * (-y * sigmoid(-y * z[i]));
        }
        g = g * c_over_m;
        if (!isfinite(g)) {
            fprintf(stderr, "ref_epochs: non-finite gradient at column %lu\n", (unsigned long)j);
            exit(3);
        }
        double wn = soft(w[j] - g / betaj[j], 1.0 / betaj[j] * lambda);
        double delta = wn - w[j];
        if (fabs(delta) > 0.0) {
            w[j] = wn;
            for (uint64_t p = lo; p < hi; p++) z[in->rows[p]] = z[in->rows[p]] + delta * in->colvalues[p];
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: ref_epochs INPUT OUTPUT\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    Input in;
    uint64_t head[4];
    double params[5];
    if (fread(head, sizeof head, 1, f) != 1 || fread(params, sizeof params, 1, f) != 1) {
        fprintf(stderr, "ref_epochs: short header\n");
        return 1;
    }
    in.m = head[0], in.d = head[1], in.nnz = head[2], in.epochs = head[3];
    in.eta0 = params[0], in.l1 = params[1], in.kappa = params[2], in.c_over_m = params[3], in.lambda = params[4];
    in.indptr = slurp(f, 8 * (in.m + 1));
    in.indices = slurp(f, 4 * in.nnz);
    in.values = slurp(f, 8 * in.nnz);
    in.labels = slurp(f, 8 * in.m);
    in.colptr = slurp(f, 8 * (in.d + 1));
    in.rows = slurp(f, 4 * in.nnz);
    in.colvalues = slurp(f, 8 * in.nnz);
    in.row_orders = slurp(f, 4 * in.m * in.epochs);
    in.col_orders = slurp(f, 4 * in.d * in.epochs);
    fclose(f);

    FILE *out = fopen(argv[2], "wb");
    if (!out) {
        perror(argv[2]);
        return 2;
    }

    Fobos fb = {calloc(in.d, 8), calloc(in.d, 8), 0.0, 0.0};
    double best = INFINITY;
    for (uint64_t e = 0; e < in.epochs; e++) {
        double t0 = now();
        fobos_epoch(&in, &fb, in.row_orders + e * in.m);
        double t1 = now() - t0;
        if (t1 < best) best = t1;
        if (e == 0) fwrite(fb.w, 8, in.d, out);
    }
    fwrite(fb.w, 8, in.d, out);
    printf("fobos %.9f\n", best);

    Scd sc = {calloc(in.d, 8), calloc(in.m, 8), calloc(in.d, 8)};
    scd_init(&in, &sc);
    best = INFINITY;
    for (uint64_t e = 0; e < in.epochs; e++) {
        double t0 = now();
        scd_epoch(&in, &sc, in.col_orders + e * in.d);
        double t1 = now() - t0;
        if (t1 < best) best = t1;
        if (e == 0) fwrite(sc.w, 8, in.d, out);
    }
    fwrite(sc.w, 8, in.d, out);
    printf("scd %.9f\n", best);
    if (fclose(out) != 0) {
        perror(argv[2]);
        return 1;
    }
    return 0;
}

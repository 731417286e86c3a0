/* The compiled core: ruleset 1's rules over cell bytes and the rating's simulated players'
 * whole game loop, byte-identical to the Python they stand in for (pipeline/engine/rules.py,
 * pipeline/rating/players.py: the reference, and the fallback when this is not built).
 *
 * The players draw from Python's random.Random: `MT` is its Mersenne Twister (MT19937, the
 * state `Random.getstate()` gives), and choice/randrange are drawn as CPython's
 * `_randbelow_with_getrandbits` draws them, so a game here consumes the very same numbers.
 *
 * Every entry point checks its own input (cell values 0-9, lengths within MAX_INPUT_CELLS,
 * indices on the board, pairs legal) and raises ValueError otherwise; boards that grow by Add
 * numbers during a game live in buffers sized as they grow.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#ifdef Py_T_OBJECT_EX /* 3.12 on */
#define NM_T_OBJECT_EX Py_T_OBJECT_EX
#define NM_READONLY Py_READONLY
#else
#include <structmember.h>
#define NM_T_OBJECT_EX T_OBJECT_EX
#define NM_READONLY READONLY
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 9
#ifndef NM_SOURCE_SHA256
#define NM_SOURCE_SHA256 "" /* built without setup.py: names no source */
#endif
#define MAX_INPUT_CELLS 4000 /* limits.MAX_CELLS (a test checks they agree) */
#define MT_N 624
#define MT_M 397
#define MAX_KEY_WORDS 1024 /* a seed of up to 32768 bits */

static const unsigned char CLASS[10] = {0, 1, 2, 3, 4, 5, 4, 3, 2, 1};

/* Gaps are skipped eight cells at a time where the compiler and the byte order allow it. */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NM_WORDS 1
#else
#define NM_WORDS 0
#endif

/* The first active cell at x or after (x >= 0), or n when none. */
static inline Py_ssize_t
next_active(const unsigned char *cells, Py_ssize_t n, Py_ssize_t x)
{
#if NM_WORDS
    while (x + 8 <= n) {
        uint64_t v;
        memcpy(&v, cells + x, 8);
        if (v)
            return x + (__builtin_ctzll(v) >> 3);
        x += 8;
    }
#endif
    while (x < n && !cells[x])
        x++;
    return x;
}

/* The last active cell at x or before (x < n), or -1 when none. */
static inline Py_ssize_t
prev_active(const unsigned char *cells, Py_ssize_t x)
{
#if NM_WORDS
    while (x >= 7) {
        uint64_t v;
        memcpy(&v, cells + x - 7, 8);
        if (v)
            return x - 7 + ((63 - __builtin_clzll(v)) >> 3);
        x -= 8;
    }
#endif
    while (x >= 0 && !cells[x])
        x--;
    return x;
}

/* A bad call is a ValueError, whatever the argument parser raised (TypeError, OverflowError). */
static PyObject *
bad_call(void)
{
    if (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_OverflowError)) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyObject *text = value ? PyObject_Str(value) : NULL;
        PyErr_Clear();
        if (text != NULL && PyUnicode_Check(text))
            PyErr_SetObject(PyExc_ValueError, text);
        else
            PyErr_SetString(PyExc_ValueError, "bad arguments");
        Py_XDECREF(text);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
    }
    return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Python's Mersenne Twister                                                                 */

typedef struct {
    PyObject_HEAD
    uint32_t mt[MT_N];
    int index;
} MTObject;

static uint32_t
genrand_uint32(MTObject *self)
{
    static const uint32_t mag01[2] = {0x0U, 0x9908b0dfU};
    uint32_t y;
    uint32_t *mt = self->mt;
    if (self->index >= MT_N) {
        int kk;
        for (kk = 0; kk < MT_N - MT_M; kk++) {
            y = (mt[kk] & 0x80000000U) | (mt[kk + 1] & 0x7fffffffU);
            mt[kk] = mt[kk + MT_M] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        for (; kk < MT_N - 1; kk++) {
            y = (mt[kk] & 0x80000000U) | (mt[kk + 1] & 0x7fffffffU);
            mt[kk] = mt[kk + (MT_M - MT_N)] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        y = (mt[MT_N - 1] & 0x80000000U) | (mt[0] & 0x7fffffffU);
        mt[MT_N - 1] = mt[MT_M - 1] ^ (y >> 1) ^ mag01[y & 0x1U];
        self->index = 0;
    }
    y = mt[self->index++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= (y >> 18);
    return y;
}

/* random.Random._randbelow(n) for 1 <= n < 2**32: getrandbits(n.bit_length()) until below n */
static uint32_t
randbelow(MTObject *self, uint32_t n)
{
    if (n == 0)
        return 0; /* never asked: every caller draws among one or more */
#if defined(__GNUC__)
    int k = 32 - __builtin_clz(n);
#else
    int k = 0;
    for (uint32_t v = n; v; v >>= 1)
        k++;
#endif
    uint32_t r = genrand_uint32(self) >> (32 - k);
    while (r >= n)
        r = genrand_uint32(self) >> (32 - k);
    return r;
}

static int
mt_set(MTObject *self, PyObject *state)
{
    if (!PyTuple_Check(state) || PyTuple_GET_SIZE(state) != MT_N + 1) {
        PyErr_SetString(PyExc_ValueError, "MT state must be a tuple of 625 ints");
        return -1;
    }
    uint32_t mt[MT_N];
    for (int i = 0; i < MT_N; i++) {
        PyObject *item = PyTuple_GET_ITEM(state, i);
        if (!PyLong_Check(item)) {
            PyErr_SetString(PyExc_ValueError, "MT state: every word must be an int");
            return -1;
        }
        unsigned long w = PyLong_AsUnsignedLong(item);
        if (w == (unsigned long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "MT state: a word is not in 0..2**32-1");
            return -1;
        }
        if (w > 0xffffffffUL) {
            PyErr_SetString(PyExc_ValueError, "MT state: a word is not in 0..2**32-1");
            return -1;
        }
        mt[i] = (uint32_t)w;
    }
    PyObject *last = PyTuple_GET_ITEM(state, MT_N);
    long index = PyLong_Check(last) ? PyLong_AsLong(last) : -1;
    if (index == -1 && PyErr_Occurred())
        PyErr_Clear();
    if (index < 0 || index > MT_N) {
        PyErr_SetString(PyExc_ValueError, "MT state: the index must be in 0..624");
        return -1;
    }
    memcpy(self->mt, mt, sizeof mt);
    self->index = (int)index;
    return 0;
}

static int
MT_init(MTObject *self, PyObject *args, PyObject *kwds)
{
    PyObject *state;
    if (kwds != NULL && PyDict_GET_SIZE(kwds) != 0) {
        PyErr_SetString(PyExc_ValueError, "MT() takes no keyword arguments");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "O:MT", &state)) {
        bad_call();
        return -1;
    }
    return mt_set(self, state);
}

static PyObject *
MT_state(MTObject *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *out = PyTuple_New(MT_N + 1);
    if (out == NULL)
        return NULL;
    for (int i = 0; i < MT_N; i++) {
        PyObject *w = PyLong_FromUnsignedLong(self->mt[i]);
        if (w == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, w);
    }
    PyObject *ix = PyLong_FromLong(self->index);
    if (ix == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    PyTuple_SET_ITEM(out, MT_N, ix);
    return out;
}

static PyObject *
MT_randbelow(MTObject *self, PyObject *arg)
{
    long long n = PyLong_Check(arg) ? PyLong_AsLongLong(arg) : -1;
    if (n == -1 && PyErr_Occurred())
        return bad_call();
    if (n < 1 || n > 0xffffffffLL) {
        PyErr_SetString(PyExc_ValueError, "randbelow: n must be in 1..2**32-1");
        return NULL;
    }
    return PyLong_FromUnsignedLong(randbelow(self, (uint32_t)n));
}

static PyMethodDef MT_methods[] = {
    {"state", (PyCFunction)MT_state, METH_NOARGS,
     "The 625-int state tuple (`Random.getstate()[1]`) after the draws made so far."},
    {"randbelow", (PyCFunction)MT_randbelow, METH_O,
     "`Random._randbelow(n)`: a number in 0..n-1, drawn as CPython draws it."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MTType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pipeline.engine._core.MT",
    .tp_basicsize = sizeof(MTObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Python's random.Random Mersenne Twister: MT(Random().getstate()[1]).",
    .tp_methods = MT_methods,
    .tp_init = (initproc)MT_init,
    .tp_new = PyType_GenericNew,
};

/* ---------------------------------------------------------------------------------------- */
/* Boards                                                                                    */

typedef struct {
    int a, b;
} Pair;

/* A growable board with its legal pairs (sorted) and scratch space for the players. */
typedef struct {
    unsigned char *cells;
    Py_ssize_t n, cap;
    Pair *pairs;
    Py_ssize_t np, pcap;
} Board;

static int
ensure_cells(unsigned char **buf, Py_ssize_t *cap, Py_ssize_t need)
{
    if (need <= *cap)
        return 0;
    Py_ssize_t c = *cap ? *cap : 64;
    while (c < need) {
        if (c > PY_SSIZE_T_MAX / 2) {
            PyErr_NoMemory();
            return -1;
        }
        c *= 2;
    }
    unsigned char *p = PyMem_Realloc(*buf, (size_t)c);
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *buf = p;
    *cap = c;
    return 0;
}

static int
ensure_pairs(Pair **buf, Py_ssize_t *cap, Py_ssize_t need)
{
    if (need <= *cap)
        return 0;
    Py_ssize_t c = *cap ? *cap : 64;
    while (c < need) {
        if (c > PY_SSIZE_T_MAX / 2 / (Py_ssize_t)sizeof(Pair)) {
            PyErr_NoMemory();
            return -1;
        }
        c *= 2;
    }
    Pair *p = PyMem_Realloc(*buf, (size_t)c * sizeof(Pair));
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *buf = p;
    *cap = c;
    return 0;
}

/* The legal pairs of cells[0..n) into out (room for 4n), sorted by first then second cell.
 * Per active cell: the next active cell in reading order, and the first active cell along the
 * column, the down-right and the down-left diagonal (rules.scan_pairs' rays). */
static Py_ssize_t
scan(const unsigned char *cells, Py_ssize_t n, Pair *out)
{
    Py_ssize_t np = 0;
    Py_ssize_t nx;
    for (Py_ssize_t i = next_active(cells, n, 0); i < n; i = nx) {
        nx = next_active(cells, n, i + 1); /* also i's partner in reading order */
        int col = (int)((size_t)i % WIDTH);
        unsigned char k = CLASS[cells[i]];
        int js[4];
        int m = 0;
        /* a partner is written and counted only when of i's class (without a branch: the
         * classes are as good as random) */
        Py_ssize_t j = nx;
        if (j < n) {
            js[m] = (int)j;
            m += CLASS[cells[j]] == k;
        }
        for (j = i + WIDTH; j < n; j += WIDTH) {
            if (cells[j]) {
                js[m] = (int)j;
                m += CLASS[cells[j]] == k;
                break;
            }
        }
        j = i;
        for (int s = 0; s < WIDTH - 1 - col; s++) {
            j += WIDTH + 1;
            if (j >= n)
                break;
            if (cells[j]) {
                js[m] = (int)j;
                m += CLASS[cells[j]] == k;
                break;
            }
        }
        j = i;
        for (int s = 0; s < col; s++) {
            j += WIDTH - 1;
            if (j >= n)
                break;
            if (cells[j]) {
                js[m] = (int)j;
                m += CLASS[cells[j]] == k;
                break;
            }
        }
        /* sort the (at most 4) partners, dropping repeats */
        for (int x = 1; x < m; x++) {
            int v = js[x], y = x - 1;
            while (y >= 0 && js[y] > v) {
                js[y + 1] = js[y];
                y--;
            }
            js[y + 1] = v;
        }
        for (int x = 0; x < m; x++) {
            if (x && js[x] == js[x - 1])
                continue;
            out[np].a = (int)i;
            out[np].b = js[x];
            np++;
        }
    }
    return np;
}

static int
board_rescan(Board *bd)
{
    if (ensure_pairs(&bd->pairs, &bd->pcap, 4 * bd->n + 4) < 0)
        return -1;
    bd->np = scan(bd->cells, bd->n, bd->pairs);
    return 0;
}

static inline int
row_empty(const unsigned char *cells, Py_ssize_t n, Py_ssize_t start)
{
#if NM_WORDS && WIDTH == 9
    if (start + WIDTH <= n) { /* a whole row: eight cells at once, then the ninth */
        uint64_t v;
        memcpy(&v, cells + start, 8);
        return !v && !cells[start + 8];
    }
#endif
    Py_ssize_t end = start + WIDTH < n ? start + WIDTH : n;
    for (Py_ssize_t x = start; x < end; x++)
        if (cells[x])
            return 0;
    return 1;
}

/* rules.remove_pair in place: i and j become gaps, then an emptied row of either goes (the
 * higher row first). Returns 1 when a row went. */
static int
remove_in_place(unsigned char *cells, Py_ssize_t *n, Py_ssize_t i, Py_ssize_t j)
{
    cells[i] = 0;
    cells[j] = 0;
    Py_ssize_t ri = i / WIDTH, rj = j / WIDTH;
    Py_ssize_t rows[2];
    int nr = 0;
    if (ri != rj) {
        rows[nr++] = rj > ri ? rj : ri;
        rows[nr++] = rj > ri ? ri : rj;
    }
    else
        rows[nr++] = ri;
    int gone = 0;
    for (int r = 0; r < nr; r++) {
        Py_ssize_t s = rows[r] * WIDTH;
        if (s >= *n)
            continue;
        if (row_empty(cells, *n, s)) {
            Py_ssize_t e = s + WIDTH < *n ? s + WIDTH : *n;
            memmove(cells + s, cells + e, (size_t)(*n - e));
            *n -= e - s;
            gone = 1;
        }
    }
    return gone;
}

/* The first active cell from x (exclusive) stepping back by `back` at most `room` times, or
 * -1; the caller keeps every step on the board (room at most x's row). */
static inline Py_ssize_t
first_back(const unsigned char *cells, Py_ssize_t x, Py_ssize_t back, Py_ssize_t room)
{
    for (Py_ssize_t s = 0; s < room; s++) {
        x -= back;
        if (cells[x])
            return x;
    }
    return -1;
}

/* The first active cell from x (exclusive) stepping on by `step` at most `room` times while on
 * the board (cell < n), or -1. */
static inline Py_ssize_t
first_on(const unsigned char *cells, Py_ssize_t n, Py_ssize_t x, Py_ssize_t step, Py_ssize_t room)
{
    for (Py_ssize_t s = 0; s < room; s++) {
        x += step;
        if (x >= n)
            return -1;
        if (cells[x])
            return x;
    }
    return -1;
}

/* players._opened_across for one gap x: the pairs seeing across x (cells a < b) into out:
 * along reading order, the column and both diagonals, the nearest active cells either side.
 * *behind gets the least of x and those nearest active cells before x along the four lines
 * that are of class k, the class x held (pairs_after_gaps' bound: only such a cell can have
 * paired with x). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int
opened_through(const unsigned char *cells, Py_ssize_t n, Py_ssize_t x, Py_ssize_t row,
               unsigned char k, Pair *out, Py_ssize_t *behind)
{
    int m = 0;
    Py_ssize_t least = x;
    Py_ssize_t a = prev_active(cells, x - 1);
    if (a >= 0) {
        unsigned char ka = CLASS[cells[a]];
        least = ka == k ? a : least;
        Py_ssize_t b = next_active(cells, n, x + 1);
        if (b < n) { /* written, counted when the classes match (without a branch) */
            out[m].a = (int)a;
            out[m].b = (int)b;
            m += ka == CLASS[cells[b]];
        }
    }
    Py_ssize_t col = x - row * WIDTH;
    Py_ssize_t p, q;
    /* the column: the nearest active cells above and below (any number of rows) */
    for (p = x - WIDTH; p >= 0 && !cells[p]; p -= WIDTH)
        ;
    if (p >= 0) {
        least = CLASS[cells[p]] == k && p < least ? p : least;
        for (q = x + WIDTH; q < n && !cells[q]; q += WIDTH)
            ;
        if (q < n) {
            out[m].a = (int)p;
            out[m].b = (int)q;
            m += CLASS[cells[p]] == CLASS[cells[q]];
        }
    }
    /* the down-right diagonal (up-left behind): at most col steps back (and row: each goes
     * up one row), WIDTH-1-col ahead */
    p = first_back(cells, x, WIDTH + 1, col < row ? col : row);
    if (p >= 0) {
        least = CLASS[cells[p]] == k && p < least ? p : least;
        q = first_on(cells, n, x, WIDTH + 1, WIDTH - 1 - col);
        if (q >= 0) {
            out[m].a = (int)p;
            out[m].b = (int)q;
            m += CLASS[cells[p]] == CLASS[cells[q]];
        }
    }
    /* the down-left diagonal (up-right behind) */
    p = first_back(cells, x, WIDTH - 1, WIDTH - 1 - col < row ? WIDTH - 1 - col : row);
    if (p >= 0) {
        least = CLASS[cells[p]] == k && p < least ? p : least;
        q = first_on(cells, n, x, WIDTH - 1, col);
        if (q >= 0) {
            out[m].a = (int)p;
            out[m].b = (int)q;
            m += CLASS[cells[p]] == CLASS[cells[q]];
        }
    }
    *behind = least;
    return m;
}

static int
pair_in(const Pair *pairs, Py_ssize_t np, int a, int b)
{
    Py_ssize_t lo = 0, hi = np;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        const Pair *p = &pairs[mid];
        if (p->a < a || (p->a == a && p->b < b))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < np && pairs[lo].a == a && pairs[lo].b == b;
}

/* Scratch space shared by one call's games. */
typedef struct {
    int *deg;
    Py_ssize_t dcap;
    int *row_actives;
    Py_ssize_t rcap;
    unsigned char *work;
    Py_ssize_t wcap;
    Pair *wpairs;
    Py_ssize_t wpcap;
    int *counts;
    Py_ssize_t ccap;
} Scratch;

static void
scratch_free(Scratch *s)
{
    PyMem_Free(s->deg);
    PyMem_Free(s->row_actives);
    PyMem_Free(s->work);
    PyMem_Free(s->wpairs);
    PyMem_Free(s->counts);
    memset(s, 0, sizeof *s);
}

static int
ensure_ints(int **buf, Py_ssize_t *cap, Py_ssize_t need)
{
    if (need <= *cap)
        return 0;
    Py_ssize_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    int *p = PyMem_Realloc(*buf, (size_t)c * sizeof(int));
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *buf = p;
    *cap = c;
    return 0;
}

/* players.pair_counts_after: for each legal pair, the legal pairs left after removing it.
 * counts gets np entries; uses the scratch's work buffers (not the caller's board). */
static int
counts_after(Scratch *sc, const unsigned char *cells, Py_ssize_t n, const Pair *pairs,
             Py_ssize_t np, int *counts)
{
    Py_ssize_t nrows = (n + WIDTH - 1) / WIDTH;
    if (ensure_ints(&sc->deg, &sc->dcap, n + 1) < 0 ||
        ensure_ints(&sc->row_actives, &sc->rcap, nrows + 1) < 0 ||
        ensure_cells(&sc->work, &sc->wcap, n + 1) < 0 ||
        ensure_pairs(&sc->wpairs, &sc->wpcap, 4 * n + 4) < 0)
        return -1;
    int *deg = sc->deg;
    memset(deg, 0, (size_t)n * sizeof(int));
    for (Py_ssize_t k = 0; k < np; k++) {
        deg[pairs[k].a]++;
        deg[pairs[k].b]++;
    }
    for (Py_ssize_t r = 0; r < nrows; r++) {
        int c = 0;
        Py_ssize_t end = r * WIDTH + WIDTH < n ? r * WIDTH + WIDTH : n;
        for (Py_ssize_t x = r * WIDTH; x < end; x++)
            c += cells[x] != 0;
        sc->row_actives[r] = c;
    }
    unsigned char *work = sc->work;
    memcpy(work, cells, (size_t)n);
    for (Py_ssize_t k = 0; k < np; k++) {
        int i = pairs[k].a, j = pairs[k].b;
        Py_ssize_t ri = i / WIDTH, rj = j / WIDTH;
        if (sc->row_actives[ri] == 1 || sc->row_actives[rj] == 1 ||
            (ri == rj && sc->row_actives[ri] == 2)) {
            Py_ssize_t m = n;
            remove_in_place(work, &m, i, j);
            counts[k] = (int)scan(work, m, sc->wpairs);
            memcpy(work, cells, (size_t)n);
            continue;
        }
        unsigned char vi = work[i], vj = work[j];
        work[i] = work[j] = 0;
        Pair found[8];
        Py_ssize_t unused;
        int m = opened_through(work, n, i, ri, 0, found, &unused);
        m += opened_through(work, n, j, rj, 0, found + m, &unused);
        work[i] = vi;
        work[j] = vj;
        int extra = 0;
        for (int x = 0; x < m; x++) {
            int dup = 0;
            for (int y = 0; y < x; y++)
                if (found[y].a == found[x].a && found[y].b == found[x].b) {
                    dup = 1;
                    break;
                }
            if (!dup && !pair_in(pairs, np, found[x].a, found[x].b))
                extra++;
        }
        counts[k] = (int)np - deg[i] - deg[j] + 1 + extra;
    }
    return 0;
}

/* players.pairs_after_gaps: i and j are gaps now (rows kept); the pairs through them go, and
 * the cells that now see each other across them pair (inserted in order, once). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int
pairs_after_gaps(Board *bd, int i, int j, Py_ssize_t ri, Py_ssize_t rj, unsigned char cls,
                 Py_ssize_t at)
{
    Pair found[8];
    Py_ssize_t bi, bj;
    int m = opened_through(bd->cells, bd->n, i, ri, cls, found, &bi);
    m += opened_through(bd->cells, bd->n, j, rj, cls, found + m, &bj);
    /* A pair through i (or j) is (i, b), or (a, i) with a the nearest active cell before i
     * along a line (j is not between them, or a is j) and of i's class cls (i and j, a legal
     * pair, share it): every pair that goes has its first cell at bi or bj or after, so the
     * pairs before those stay as they are. They are found back from (i, j), pairs[at] (its
     * first cell is at bi or after). */
    int from = (int)(bi < bj ? bi : bj);
    Pair *pairs = bd->pairs;
    Py_ssize_t k = at;
    while (k > 0 && pairs[k - 1].a >= from)
        k--;
    Py_ssize_t np = k, total = bd->np;
    int last = i > j ? i : j; /* a pair (a, b), a < b, from after the later cell keeps both */
    const unsigned char *cells = bd->cells;
    /* without branches: kept or overwritten; a pair goes when a cell of it is a gap now (the
     * cells of every pair were active: those gaps are i and j) */
    for (; k < total && pairs[k].a <= last; k++) {
        Pair p = pairs[k];
        pairs[np] = p;
        np += (cells[p.a] != 0) & (cells[p.b] != 0);
    }
    if (k < total && np < k)
        memmove(pairs + np, pairs + k, (size_t)(total - k) * sizeof(Pair));
    Py_ssize_t wend = np; /* the pairs from a cell before `last` end here (a found pair's too) */
    np += total - k;
    for (int x = 0; x < m; x++) {
        int a = found[x].a, b = found[x].b;
        Py_ssize_t lo = 0, hi = wend;
        while (lo < hi) {
            Py_ssize_t mid = (lo + hi) / 2;
            if (pairs[mid].a < a || (pairs[mid].a == a && pairs[mid].b < b))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < np && pairs[lo].a == a && pairs[lo].b == b)
            continue;
        if (np + 1 > bd->pcap) { /* never: a board of n cells has at most 4n pairs */
            PyErr_SetString(PyExc_ValueError, "pair table overflow");
            return -1;
        }
        memmove(pairs + lo + 1, pairs + lo, (size_t)(np - lo) * sizeof(Pair));
        pairs[lo].a = a;
        pairs[lo].b = b;
        np++;
        wend++;
    }
    bd->np = np;
    return 0;
}

/* One pair removal as players.remove_and_track sees it: `bd` becomes the board after its pair
 * (i, j) = bd->pairs[at] with its legal pairs; *collapsed and *opened as in `Step`. `gap` is
 * scratch room for n cells and `gpairs` for 4n pairs. */
static int track_collapse(Board *bd, Py_ssize_t at, int i, int j, unsigned char cls, int gone_i,
                          int gone_j, unsigned char **gap, Py_ssize_t *gcap, Pair **gpairs,
                          Py_ssize_t *gpcap, int *opened);

/* (the removal without a collapse, most of them, is inlined where it is called) */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int
track(Board *bd, Py_ssize_t at, unsigned char **gap, Py_ssize_t *gcap, Pair **gpairs,
      Py_ssize_t *gpcap, int *collapsed, int *opened)
{
    int i = bd->pairs[at].a, j = bd->pairs[at].b;
    Py_ssize_t n = bd->n;
    unsigned char *cells = bd->cells;
    unsigned char cls = CLASS[cells[i]]; /* j's too: (i, j) is a legal pair */
    cells[i] = 0;
    cells[j] = 0;
    Py_ssize_t ri = i / WIDTH, rj = j / WIDTH; /* i, j >= 0 */
    Py_ssize_t si = ri * WIDTH, sj = rj * WIDTH;
    int gone_i = row_empty(cells, n, si);
    int gone_j = sj != si && row_empty(cells, n, sj);
    *collapsed = 0;
    *opened = 0;
    if (!(gone_i || gone_j))
        return pairs_after_gaps(bd, i, j, ri, rj, cls, at);
    *collapsed = 1;
    return track_collapse(bd, at, i, j, cls, gone_i, gone_j, gap, gcap, gpairs, gpcap, opened);
}

/* track's removal that empties a row: the gapped board's pairs (tracked), then the collapsed
 * board's (scanned); *opened as in `Step`. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int
track_collapse(Board *bd, Py_ssize_t at, int i, int j, unsigned char cls, int gone_i, int gone_j,
               unsigned char **gap, Py_ssize_t *gcap, Pair **gpairs, Py_ssize_t *gpcap,
               int *opened)
{
    Py_ssize_t n = bd->n;
    unsigned char *cells = bd->cells;
    Py_ssize_t ri = i / WIDTH, rj = j / WIDTH;
    Py_ssize_t si = ri * WIDTH, sj = rj * WIDTH;
    if (ensure_cells(gap, gcap, n + 1) < 0 || ensure_pairs(gpairs, gpcap, 4 * n + 4) < 0)
        return -1;
    if (pairs_after_gaps(bd, i, j, ri, rj, cls, at) < 0)
        return -1;
    Py_ssize_t nkept = bd->np;
    memcpy(*gpairs, bd->pairs, (size_t)nkept * sizeof(Pair));
    Py_ssize_t s1 = n, s2 = n;
    if (gone_i && gone_j) {
        s1 = si < sj ? si : sj;
        s2 = si < sj ? sj : si;
    }
    else
        s1 = gone_i ? si : sj;
    Py_ssize_t m = n;
    Py_ssize_t hi = gone_j ? sj : -1, lo = gone_i ? si : -1;
    if (hi >= 0) {
        Py_ssize_t e = hi + WIDTH < m ? hi + WIDTH : m;
        memmove(cells + hi, cells + e, (size_t)(m - e));
        m -= e - hi;
    }
    if (lo >= 0) {
        Py_ssize_t e = lo + WIDTH < m ? lo + WIDTH : m;
        memmove(cells + lo, cells + e, (size_t)(m - e));
        m -= e - lo;
    }
    bd->n = m;
    if (board_rescan(bd) < 0)
        return -1;
    /* opened: a pair of the collapsed board that no pair of the gapped board becomes */
    /* the gapped board's pairs, moved as the collapse moves their cells, stay in order (a
     * collapse keeps the cells' order): one walk along both finds the first that none is */
    const Pair *kept = *gpairs;
    Py_ssize_t y = 0;
    for (Py_ssize_t k = 0; k < bd->np; k++) {
        int a = bd->pairs[k].a, b = bd->pairs[k].b;
        int ka = 0, kb = 0;
        for (; y < nkept; y++) {
            ka = kept[y].a - WIDTH * ((kept[y].a > s1) + (kept[y].a > s2));
            kb = kept[y].b - WIDTH * ((kept[y].b > s1) + (kept[y].b > s2));
            if (ka > a || (ka == a && kb >= b))
                break;
        }
        if (y == nkept || ka != a || kb != b) {
            *opened = 1;
            break;
        }
        y++;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Argument checks                                                                           */

/* cells as a bytes-like object of values 0-9, at most `most` long */
static int
get_cells_max(PyObject *obj, Py_buffer *view, Py_ssize_t most)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "cells must be bytes, got %.100s", Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (view->len > most) {
        PyErr_Format(PyExc_ValueError, "cells: %zd cells, more than the limit of %zd", view->len,
                     most);
        PyBuffer_Release(view);
        return -1;
    }
    const unsigned char *c = view->buf;
    for (Py_ssize_t x = 0; x < view->len; x++) {
        if (c[x] > 9) {
            PyErr_Format(PyExc_ValueError, "cells: value %d at %zd is not 0-9", c[x], x);
            PyBuffer_Release(view);
            return -1;
        }
    }
    return 0;
}

/* the rules take any board length (their work is linear in it): only the pair table's size
 * is kept from overflowing */
static int
get_cells(PyObject *obj, Py_buffer *view)
{
    return get_cells_max(obj, view, PY_SSIZE_T_MAX / 64);
}

static int
board_from(Board *bd, const Py_buffer *view, Py_ssize_t extra)
{
    memset(bd, 0, sizeof *bd);
    if (ensure_cells(&bd->cells, &bd->cap, view->len + extra + 1) < 0)
        return -1;
    memcpy(bd->cells, view->buf, (size_t)view->len);
    bd->n = view->len;
    return board_rescan(bd);
}

static void
board_free(Board *bd)
{
    PyMem_Free(bd->cells);
    PyMem_Free(bd->pairs);
    memset(bd, 0, sizeof *bd);
}

static PyObject *
pairs_list(const Pair *pairs, Py_ssize_t np)
{
    PyObject *out = PyList_New(np);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k < np; k++) {
        PyObject *t = Py_BuildValue("(ii)", pairs[k].a, pairs[k].b);
        if (t == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, k, t);
    }
    return out;
}

/* the index of legal pair (i, j) on the board, or -1 with ValueError set */
static Py_ssize_t
legal_index(const Board *bd, long i, long j)
{
    if (i >= 0 && j >= 0 && i < bd->n && j < bd->n) {
        if (i > j) {
            long t = i;
            i = j;
            j = t;
        }
        Py_ssize_t lo = 0, hi = bd->np;
        while (lo < hi) {
            Py_ssize_t mid = (lo + hi) / 2;
            const Pair *p = &bd->pairs[mid];
            if (p->a < i || (p->a == i && p->b < j))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < bd->np && bd->pairs[lo].a == i && bd->pairs[lo].b == j)
            return lo;
    }
    PyErr_Format(PyExc_ValueError, "(%ld, %ld) is not a legal pair of the board", i, j);
    return -1;
}

/* ---------------------------------------------------------------------------------------- */
/* The rules                                                                                 */

static PyObject *
core_legal_pairs(PyObject *Py_UNUSED(mod), PyObject *arg)
{
    Py_buffer view;
    if (get_cells(arg, &view) < 0)
        return NULL;
    Pair *pairs = PyMem_Malloc((size_t)(4 * view.len + 4) * sizeof(Pair));
    if (pairs == NULL) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    Py_ssize_t np = scan(view.buf, view.len, pairs);
    PyBuffer_Release(&view);
    PyObject *out = pairs_list(pairs, np);
    PyMem_Free(pairs);
    return out;
}

/* rules.scan_pairs: (ray pairs, reading-order pairs), each in scan order; a pair joined in
 * reading order is only a reading pair. geo and read have room for 3n and n pairs. */
static void
scan_split(const unsigned char *cells, Py_ssize_t n, Pair *geo, Py_ssize_t *ngeo, Pair *read,
           Py_ssize_t *nread)
{
    Py_ssize_t ng = 0, nr = 0, prev = -1;
    unsigned char prev_class = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char k = CLASS[cells[i]];
        if (!k)
            continue;
        if (prev_class == k) {
            read[nr].a = (int)prev;
            read[nr].b = (int)i;
            nr++;
        }
        prev = i;
        prev_class = k;
        int col = (int)(i % WIDTH);
        const int step[3] = {WIDTH, WIDTH + 1, WIDTH - 1};
        const int room[3] = {1 << 30, WIDTH - 1 - col, col};
        for (int line = 0; line < 3; line++) {
            Py_ssize_t j = i;
            for (int s = 0; s < room[line]; s++) {
                j += step[line];
                if (j >= n)
                    break;
                if (cells[j]) {
                    if (CLASS[cells[j]] == k) {
                        geo[ng].a = (int)i;
                        geo[ng].b = (int)j;
                        ng++;
                    }
                    break;
                }
            }
        }
    }
    if (nr && ng) {
        Py_ssize_t w = 0;
        for (Py_ssize_t x = 0; x < ng; x++)
            if (!pair_in(read, nr, geo[x].a, geo[x].b))
                geo[w++] = geo[x];
        ng = w;
    }
    *ngeo = ng;
    *nread = nr;
}

/* scan_pairs (as_tuple) or pairs_ordered (the two lists joined) */
static PyObject *
split_pairs(PyObject *arg, int as_tuple)
{
    Py_buffer view;
    if (get_cells(arg, &view) < 0)
        return NULL;
    Pair *geo = PyMem_Malloc((size_t)(4 * view.len + 4) * sizeof(Pair));
    if (geo == NULL) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    Pair *read = geo + 3 * view.len + 2;
    Py_ssize_t ng, nr;
    scan_split(view.buf, view.len, geo, &ng, read, &nr);
    PyBuffer_Release(&view);
    PyObject *out = NULL;
    if (as_tuple) {
        PyObject *g = pairs_list(geo, ng);
        PyObject *r = g ? pairs_list(read, nr) : NULL;
        if (g && r)
            out = PyTuple_Pack(2, g, r);
        Py_XDECREF(g);
        Py_XDECREF(r);
    }
    else {
        memmove(geo + ng, read, (size_t)nr * sizeof(Pair));
        out = pairs_list(geo, ng + nr);
    }
    PyMem_Free(geo);
    return out;
}

static PyObject *
core_scan_pairs(PyObject *Py_UNUSED(mod), PyObject *arg)
{
    return split_pairs(arg, 1);
}

static PyObject *
core_pairs_ordered(PyObject *Py_UNUSED(mod), PyObject *arg)
{
    return split_pairs(arg, 0);
}

static PyObject *
core_has_legal_pair(PyObject *Py_UNUSED(mod), PyObject *arg)
{
    Py_buffer view;
    if (get_cells(arg, &view) < 0)
        return NULL;
    Pair *pairs = PyMem_Malloc((size_t)(4 * view.len + 4) * sizeof(Pair));
    if (pairs == NULL) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    Py_ssize_t np = scan(view.buf, view.len, pairs);
    PyBuffer_Release(&view);
    PyMem_Free(pairs);
    return PyBool_FromLong(np > 0);
}

static PyObject *
core_remove_pair(PyObject *Py_UNUSED(mod), PyObject *args)
{
    PyObject *obj;
    Py_ssize_t i, j;
    if (!PyArg_ParseTuple(args, "Onn:remove_pair", &obj, &i, &j))
        return bad_call();
    Py_buffer view;
    if (get_cells(obj, &view) < 0)
        return NULL;
    if (i < 0 || j < 0 || i >= view.len || j >= view.len || i == j) {
        PyErr_Format(PyExc_ValueError, "remove_pair: cells %zd and %zd are not two cells of a "
                     "board of %zd", i, j, view.len);
        PyBuffer_Release(&view);
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(view.buf, view.len);
    PyBuffer_Release(&view);
    if (out == NULL)
        return NULL;
    Py_ssize_t n = PyBytes_GET_SIZE(out);
    remove_in_place((unsigned char *)PyBytes_AS_STRING(out), &n, i, j);
    if (n != PyBytes_GET_SIZE(out) && _PyBytes_Resize(&out, n) < 0)
        return NULL;
    return out;
}

static PyObject *
core_add_numbers(PyObject *Py_UNUSED(mod), PyObject *arg)
{
    Py_buffer view;
    if (get_cells(arg, &view) < 0)
        return NULL;
    const unsigned char *c = view.buf;
    Py_ssize_t act = 0;
    for (Py_ssize_t x = 0; x < view.len; x++)
        act += c[x] != 0;
    PyObject *out = PyBytes_FromStringAndSize(NULL, view.len + act);
    if (out == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    unsigned char *o = (unsigned char *)PyBytes_AS_STRING(out);
    memcpy(o, c, (size_t)view.len);
    Py_ssize_t w = view.len;
    for (Py_ssize_t x = 0; x < view.len; x++)
        if (c[x])
            o[w++] = c[x];
    PyBuffer_Release(&view);
    return out;
}

static PyObject *
core_pair_counts_after(PyObject *Py_UNUSED(mod), PyObject *arg)
{
    Py_buffer view;
    if (get_cells(arg, &view) < 0)
        return NULL;
    Board bd;
    Scratch sc = {0};
    PyObject *out = NULL;
    if (board_from(&bd, &view, 0) < 0)
        goto done;
    if (ensure_ints(&sc.counts, &sc.ccap, bd.np + 1) < 0)
        goto done;
    if (counts_after(&sc, bd.cells, bd.n, bd.pairs, bd.np, sc.counts) < 0)
        goto done;
    out = PyList_New(bd.np);
    if (out == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < bd.np; k++) {
        PyObject *v = PyLong_FromLong(sc.counts[k]);
        if (v == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, k, v);
    }
done:
    PyBuffer_Release(&view);
    board_free(&bd);
    scratch_free(&sc);
    return out;
}

static PyObject *
core_track(PyObject *Py_UNUSED(mod), PyObject *args)
{
    PyObject *obj;
    long i, j;
    if (!PyArg_ParseTuple(args, "Oll:track", &obj, &i, &j))
        return bad_call();
    Py_buffer view;
    if (get_cells(obj, &view) < 0)
        return NULL;
    Board bd;
    unsigned char *gap = NULL;
    Py_ssize_t gcap = 0, gpcap = 0;
    Pair *gpairs = NULL;
    PyObject *out = NULL;
    int collapsed, opened;
    if (board_from(&bd, &view, 0) < 0)
        goto done;
    Py_ssize_t k = legal_index(&bd, i, j);
    if (k < 0)
        goto done;
    if (track(&bd, k, &gap, &gcap, &gpairs, &gpcap, &collapsed, &opened) < 0)
        goto done;
    PyObject *pl = pairs_list(bd.pairs, bd.np);
    if (pl == NULL)
        goto done;
    out = Py_BuildValue("(y#NOO)", (const char *)bd.cells, bd.n, pl,
                        collapsed ? Py_True : Py_False, opened ? Py_True : Py_False);
done:
    PyBuffer_Release(&view);
    board_free(&bd);
    PyMem_Free(gap);
    PyMem_Free(gpairs);
    return out;
}

/* ---------------------------------------------------------------------------------------- */
/* The choices' memo                                                                         */

/* The lookahead's (and opener's) and the planner's choice at a position is a function of the
 * cells alone (their pairs follow from them) up to the one draw among the best pairs: the memo
 * keeps the best pairs' indices by (player tag, cells), so a position met again (the batch's
 * games share their first positions) costs a lookup; the draw is still made each time. Entries
 * live in one arena; when it or the table is full, everything goes (a generation count). */
#define MEMO_SLOTS 8192            /* a power of 2 */
#define MEMO_ARENA (4 * 1024 * 1024) /* bytes */
#define MEMO_MAX_CELLS 512         /* larger boards are not kept */

typedef struct {
    uint64_t hash;
    uint32_t gen;
    int32_t tag, n, nb;
    Py_ssize_t off; /* cells at arena + off, then nb int32 indices */
} MemoSlot;

typedef struct {
    MemoSlot *slots;
    unsigned char *arena;
    Py_ssize_t alen;
    Py_ssize_t used;
    uint32_t gen;
} Memo;

static void
memo_free(Memo *m)
{
    PyMem_Free(m->slots);
    PyMem_Free(m->arena);
    memset(m, 0, sizeof *m);
}

static uint64_t
memo_hash(int tag, const unsigned char *cells, Py_ssize_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)(uint32_t)tag << 32) ^ (uint64_t)n;
    Py_ssize_t x = 0;
    for (; x + 8 <= n; x += 8) {
        uint64_t v;
        memcpy(&v, cells + x, 8);
        h = (h ^ v) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 29;
    }
    uint64_t v = 0;
    for (Py_ssize_t y = 0; x + y < n; y++)
        v |= (uint64_t)cells[x + y] << (8 * y);
    h = (h ^ v) * 0xC4CEB9FE1A85EC53ULL;
    h ^= h >> 32;
    return h;
}

/* The slot for (tag, cells): the one holding it, or the empty one it would go in; NULL when
 * the memo is not set up. */
static MemoSlot *
memo_slot(Memo *m, int tag, const unsigned char *cells, Py_ssize_t n, uint64_t h)
{
    if (m->slots == NULL)
        return NULL;
    for (size_t x = (size_t)h & (MEMO_SLOTS - 1);; x = (x + 1) & (MEMO_SLOTS - 1)) {
        MemoSlot *sl = &m->slots[x];
        if (sl->gen != m->gen)
            return sl;
        if (sl->hash == h && sl->tag == tag && sl->n == n &&
            memcmp(m->arena + sl->off, cells, (size_t)n) == 0)
            return sl;
    }
}

/* The best indices kept for (tag, cells) into out (room for the board's pairs): their count,
 * or -1 when not kept. */
static Py_ssize_t
memo_get(Memo *m, int tag, const unsigned char *cells, Py_ssize_t n, Py_ssize_t np, int *out,
         uint64_t *hash)
{
    if (n > MEMO_MAX_CELLS)
        return -1;
    *hash = memo_hash(tag, cells, n);
    MemoSlot *sl = memo_slot(m, tag, cells, n, *hash);
    if (sl == NULL || sl->gen != m->gen || sl->nb > np)
        return -1;
    memcpy(out, m->arena + sl->off + n, (size_t)sl->nb * sizeof(int32_t));
    return sl->nb;
}

/* Keep the best indices of (tag, cells); a memo that cannot be set up is only a lost speed-up. */
static void
memo_put(Memo *m, int tag, const unsigned char *cells, Py_ssize_t n, const int *best,
         Py_ssize_t nb, uint64_t h)
{
    if (n > MEMO_MAX_CELLS || nb < 1 || nb > 4 * MEMO_MAX_CELLS + 4)
        return;
    if (m->slots == NULL) {
        m->slots = PyMem_Calloc(MEMO_SLOTS, sizeof(MemoSlot));
        m->arena = PyMem_Malloc(MEMO_ARENA);
        if (m->slots == NULL || m->arena == NULL) {
            memo_free(m);
            return;
        }
        m->gen = 1;
    }
    Py_ssize_t need = n + nb * (Py_ssize_t)sizeof(int32_t);
    if (m->used >= MEMO_SLOTS / 2 || m->alen + need > MEMO_ARENA) {
        m->gen++;
        if (m->gen == 0) { /* wrapped: every slot's generation is stale only after a wipe */
            memset(m->slots, 0, MEMO_SLOTS * sizeof(MemoSlot));
            m->gen = 1;
        }
        m->used = 0;
        m->alen = 0;
    }
    MemoSlot *sl = memo_slot(m, tag, cells, n, h);
    if (sl->gen == m->gen)
        return; /* kept already */
    memcpy(m->arena + m->alen, cells, (size_t)n);
    memcpy(m->arena + m->alen + n, best, (size_t)nb * sizeof(int32_t));
    sl->hash = h;
    sl->gen = m->gen;
    sl->tag = tag;
    sl->n = (int32_t)n;
    sl->nb = (int32_t)nb;
    sl->off = m->alen;
    m->alen += need;
    m->used++;
}

/* ---------------------------------------------------------------------------------------- */
/* The positions' tree                                                                       */

/* The board after a move is a function of the board before it and the move alone (not of the
 * player, its state or the adds left), and a batch's games (and the next batches from the same
 * start: a rating's other players, its confirmation) go through the same first positions again
 * and again. The tree keeps those positions from one start board: a node is a board with its
 * legal pairs and, per move (a pair's index, or np for an add), the node it leads to; a game
 * in the tree reads its boards from there instead of removing a pair and tracking the pairs or
 * rescanning after an add. A position is kept the second time a game reaches it (the first
 * only marks it), so positions one game alone meets are not copied. The nodes live in one
 * arena, never moved; when it is full no more are kept, and another start board starts over.
 * Every game is the same move for move: only where its boards are read from changes. */
#define TREE_ARENA (8 * 1024 * 1024) /* bytes */
#define TREE_NODES 65536
#define TREE_MAX_CELLS 1024 /* larger boards are not kept */
#define TREE_NONE (-1)        /* a move not made from the node yet */
#define TREE_SEEN (-2)        /* a move made once, its board not kept */

typedef struct {
    int32_t n, np;
    int32_t collapsed, opened; /* the move that led here, as `track` said */
    Py_ssize_t off;            /* cells at arena + off, then the pairs, then np + 1 children */
} TreeNode;

typedef struct {
    TreeNode *nodes;
    unsigned char *arena;
    Py_ssize_t alen;
    int32_t count;
    int on;                /* 1 when the tree grows from `start` */
    unsigned char *start; /* the start board's cells */
    Py_ssize_t slen, scap;
} Tree;

static void
tree_free(Tree *t)
{
    PyMem_Free(t->nodes);
    PyMem_Free(t->arena);
    PyMem_Free(t->start);
    memset(t, 0, sizeof *t);
}

static inline Py_ssize_t
tree_cells_room(Py_ssize_t n)
{
    return (n + 7) & ~(Py_ssize_t)7;
}

static inline Pair *
tree_pairs(const Tree *t, const TreeNode *nd)
{
    return (Pair *)(void *)(t->arena + nd->off + tree_cells_room(nd->n));
}

static inline int32_t *
tree_children(const Tree *t, const TreeNode *nd)
{
    return (int32_t *)(void *)(t->arena + nd->off + tree_cells_room(nd->n) +
                               (Py_ssize_t)nd->np * (Py_ssize_t)sizeof(Pair));
}

/* a read-only Board over node x (only its cells, n, pairs and np are read) */
static inline void
tree_view(const Tree *t, int32_t x, Board *view)
{
    const TreeNode *nd = &t->nodes[x];
    view->cells = t->arena + nd->off;
    view->n = nd->n;
    view->cap = nd->n;
    view->pairs = tree_pairs(t, nd);
    view->np = nd->np;
    view->pcap = nd->np;
}

/* Keep bd as a new node (no move from it made yet): its index, or -1 when it does not fit. */
static int32_t
tree_add(Tree *t, const Board *bd, int collapsed, int opened)
{
    if (t->count >= TREE_NODES || bd->n > TREE_MAX_CELLS)
        return -1;
    Py_ssize_t need = tree_cells_room(bd->n) + bd->np * (Py_ssize_t)sizeof(Pair) +
                      (bd->np + 1) * (Py_ssize_t)sizeof(int32_t);
    need = (need + 7) & ~(Py_ssize_t)7;
    if (need > TREE_ARENA - t->alen)
        return -1;
    TreeNode *nd = &t->nodes[t->count];
    nd->n = (int32_t)bd->n;
    nd->np = (int32_t)bd->np;
    nd->collapsed = collapsed;
    nd->opened = opened;
    nd->off = t->alen;
    memcpy(t->arena + nd->off, bd->cells, (size_t)bd->n);
    memcpy(tree_pairs(t, nd), bd->pairs, (size_t)bd->np * sizeof(Pair));
    int32_t *kids = tree_children(t, nd);
    for (Py_ssize_t x = 0; x <= bd->np; x++)
        kids[x] = TREE_NONE;
    t->alen += need;
    return t->count++;
}

/* The tree for the games from `cells` (their pairs given): kept when it grows from them, else
 * started over with them as its root; off (t->on = 0) when it cannot be set up, which only
 * loses the speed-up. */
static void
tree_start(Tree *t, const unsigned char *cells, Py_ssize_t n, const Pair *pairs, Py_ssize_t np)
{
    if (t->on && t->slen == n && memcmp(t->start, cells, (size_t)n) == 0)
        return;
    t->on = 0;
    if (n > TREE_MAX_CELLS)
        return;
    if (t->nodes == NULL) {
        t->nodes = PyMem_Malloc(TREE_NODES * sizeof(TreeNode));
        t->arena = PyMem_Malloc(TREE_ARENA);
        if (t->nodes == NULL || t->arena == NULL) {
            tree_free(t);
            return;
        }
    }
    if (ensure_cells(&t->start, &t->scap, n + 1) < 0) {
        PyErr_Clear();
        return;
    }
    memcpy(t->start, cells, (size_t)n);
    t->slen = n;
    t->count = 0;
    t->alen = 0;
    Board root = {(unsigned char *)cells, n, n, (Pair *)pairs, np, np};
    if (tree_add(t, &root, 0, 0) == 0)
        t->on = 1;
}

/* ---------------------------------------------------------------------------------------- */
/* The players                                                                               */

enum { P_RANDOM, P_SCANNER, P_LOOKAHEAD, P_OPENER, P_LOCAL, P_PLANNER, P_PROXIMITY, P_KINDS };

typedef struct {
    Scratch sc;
    Board one;    /* the planner's board one move ahead */
    int *idx;     /* candidate indices */
    Py_ssize_t icap;
    int *ocounts; /* the planner's counts one move ahead */
    Py_ssize_t ocap;
    unsigned char *gap;
    Py_ssize_t gcap;
    Pair *gpairs;
    Py_ssize_t gpcap;
    Pair *start_pairs; /* the start board's pairs, scanned once a batch */
    Py_ssize_t start_np, start_pcap;
    int *rec; /* a recorded game's pair counts */
    Py_ssize_t rcap;
    Memo memo;
    Tree tree;
} Work;

static void
work_free(Work *w)
{
    scratch_free(&w->sc);
    board_free(&w->one);
    PyMem_Free(w->idx);
    PyMem_Free(w->ocounts);
    PyMem_Free(w->gap);
    PyMem_Free(w->gpairs);
    PyMem_Free(w->start_pairs);
    PyMem_Free(w->rec);
    memo_free(&w->memo);
    tree_free(&w->tree);
    memset(w, 0, sizeof *w);
}

static Py_ssize_t
active_count(const unsigned char *cells, Py_ssize_t n)
{
    Py_ssize_t c = 0;
    for (Py_ssize_t x = 0; x < n; x++)
        c += cells[x] != 0;
    return c;
}

/* LookaheadPlayer's choice (also the opener's): the index of the pair to take, or -1 on error */
static Py_ssize_t
choose_lookahead(Work *w, const Board *bd, MTObject *rng)
{
    if (active_count(bd->cells, bd->n) == 2)
        return 0;
    if (ensure_ints(&w->sc.counts, &w->sc.ccap, bd->np + 1) < 0 ||
        ensure_ints(&w->idx, &w->icap, bd->np + 1) < 0)
        return -1;
    uint64_t h = 0;
    Py_ssize_t nb = memo_get(&w->memo, 0, bd->cells, bd->n, bd->np, w->idx, &h);
    if (nb < 0) {
        int *counts = w->sc.counts;
        if (counts_after(&w->sc, bd->cells, bd->n, bd->pairs, bd->np, counts) < 0)
            return -1;
        int top = counts[0];
        for (Py_ssize_t k = 1; k < bd->np; k++)
            if (counts[k] > top)
                top = counts[k];
        nb = 0;
        for (Py_ssize_t k = 0; k < bd->np; k++)
            if (counts[k] == top)
                w->idx[nb++] = (int)k;
        memo_put(&w->memo, 0, bd->cells, bd->n, w->idx, nb, h);
    }
    return nb == 1 ? w->idx[0] : w->idx[randbelow(rng, (uint32_t)nb)];
}

static Py_ssize_t planner_best(Work *w, const Board *bd, int width, int *best);

static Py_ssize_t
choose_planner(Work *w, const Board *bd, MTObject *rng, int width)
{
    if (active_count(bd->cells, bd->n) == 2 || bd->np == 1)
        return 0;
    Py_ssize_t np = bd->np;
    if (ensure_ints(&w->sc.counts, &w->sc.ccap, np + 1) < 0 ||
        ensure_ints(&w->idx, &w->icap, 2 * np + 2) < 0)
        return -1;
    int *best = w->idx + np + 1;
    uint64_t h = 0;
    Py_ssize_t nb = memo_get(&w->memo, width, bd->cells, bd->n, np, best, &h);
    if (nb < 0) {
        nb = planner_best(w, bd, width, best);
        if (nb < 0)
            return -1;
        memo_put(&w->memo, width, bd->cells, bd->n, best, nb, h);
    }
    return nb == 1 ? best[0] : best[randbelow(rng, (uint32_t)nb)];
}

/* choose_planner's best pairs (indices into best, room for np): their count, or -1 on error */
static Py_ssize_t
planner_best(Work *w, const Board *bd, int width, int *best)
{
    Py_ssize_t np = bd->np;
    int *counts = w->sc.counts;
    if (counts_after(&w->sc, bd->cells, bd->n, bd->pairs, np, counts) < 0)
        return -1;
    /* sorted(range(np), key=-count)[:width]: stable, so ties keep index order */
    int *ranked = w->idx;
    Py_ssize_t nr = 0;
    for (Py_ssize_t k = 0; k < np; k++) {
        /* insert k after every earlier index with a count >= its count */
        Py_ssize_t pos = nr;
        while (pos > 0 && counts[ranked[pos - 1]] < counts[k])
            pos--;
        if (pos >= width)
            continue;
        if (nr < width)
            nr++;
        for (Py_ssize_t y = nr - 1; y > pos; y--)
            ranked[y] = ranked[y - 1];
        ranked[pos] = (int)k;
    }
    int rank_copy[64];
    int nrank = (int)nr;
    for (int r = 0; r < nrank; r++)
        rank_copy[r] = ranked[r];
    Py_ssize_t nb = 0;
    int top = -1;
    for (int r = 0; r < nrank; r++) {
        int k = rank_copy[r];
        Board *one = &w->one;
        if (ensure_cells(&one->cells, &one->cap, bd->n + 1) < 0)
            return -1;
        if (ensure_pairs(&one->pairs, &one->pcap, 4 * bd->n + 4) < 0)
            return -1;
        memcpy(one->cells, bd->cells, (size_t)bd->n);
        one->n = bd->n;
        memcpy(one->pairs, bd->pairs, (size_t)bd->np * sizeof(Pair));
        one->np = bd->np;
        int collapsed, opened;
        if (track(one, k, &w->gap, &w->gcap, &w->gpairs, &w->gpcap, &collapsed, &opened) < 0)
            return -1;
        if (one->n == 0) {
            best[0] = k;
            return 1;
        }
        int value = 0;
        if (one->np) {
            if (ensure_ints(&w->ocounts, &w->ocap, one->np + 1) < 0)
                return -1;
            if (counts_after(&w->sc, one->cells, one->n, one->pairs, one->np, w->ocounts) < 0)
                return -1;
            int mx = w->ocounts[0];
            for (Py_ssize_t y = 1; y < one->np; y++)
                if (w->ocounts[y] > mx)
                    mx = w->ocounts[y];
            value = mx + 1;
        }
        if (value > top) {
            top = value;
            nb = 0;
            best[nb++] = k;
        }
        else if (value == top)
            best[nb++] = k;
    }
    return nb;
}

typedef struct {
    int kind, param;
    Py_ssize_t cursor; /* scanner's eyes */
    Py_ssize_t focus;  /* local's row */
} PlayerState;

/* The index of the pair to take, -2 to add now, -1 on error. */
static Py_ssize_t
choose(PlayerState *ps, Work *w, const Board *bd, int adds_left, MTObject *rng)
{
    Py_ssize_t np = bd->np;
    switch (ps->kind) {
    case P_RANDOM:
        return randbelow(rng, (uint32_t)np);
    case P_SCANNER: {
        Py_ssize_t at = ps->cursor, k = 0;
        for (Py_ssize_t x = 0; x < np; x++)
            if (bd->pairs[x].a >= at) {
                k = x;
                break;
            }
        int a = bd->pairs[k].a, b = bd->pairs[k].b;
        Py_ssize_t row_start = a - a % WIDTH;
        Py_ssize_t end = row_start + WIDTH < bd->n ? row_start + WIDTH : bd->n;
        int vanishes = 1;
        for (Py_ssize_t x = row_start; x < end; x++)
            if (bd->cells[x] && x != a && x != b) {
                vanishes = 0;
                break;
            }
        ps->cursor = vanishes ? row_start : a;
        return k;
    }
    case P_OPENER:
        if (adds_left > 0 && np <= ps->param && active_count(bd->cells, bd->n) > 2)
            return -2;
        return choose_lookahead(w, bd, rng);
    case P_LOOKAHEAD:
        return choose_lookahead(w, bd, rng);
    case P_LOCAL: {
        Py_ssize_t f = ps->focus, reach = ps->param;
        Py_ssize_t low = (f - reach) * WIDTH, high = (f + reach + 1) * WIDTH;
        /* the pairs near the focus, in index order: those from before `low` that reach into
         * [low, high), then every pair from [low, high) (pairs are sorted by their first
         * cell; none from `high` on has a cell below it) */
        const Pair *pairs = bd->pairs;
        Py_ssize_t x = 0, before = 0;
        for (; x < np && pairs[x].a < low; x++)
            before += low <= pairs[x].b && pairs[x].b < high;
        Py_ssize_t from = x;
        while (x < np && pairs[x].a < high)
            x++;
        Py_ssize_t nn = before + (x - from), k;
        if (nn == 0)
            k = (Py_ssize_t)randbelow(rng, (uint32_t)np);
        else {
            Py_ssize_t r = (Py_ssize_t)randbelow(rng, (uint32_t)nn);
            if (r >= before)
                k = from + (r - before);
            else
                for (k = 0;; k++)
                    if (low <= pairs[k].b && pairs[k].b < high && r-- == 0)
                        break;
        }
        ps->focus = pairs[k].a / WIDTH;
        return k;
    }
    case P_PLANNER:
        return choose_planner(w, bd, rng, ps->param);
    case P_PROXIMITY: {
        int low = bd->pairs[0].b - bd->pairs[0].a;
        for (Py_ssize_t x = 1; x < np; x++)
            if (bd->pairs[x].b - bd->pairs[x].a < low)
                low = bd->pairs[x].b - bd->pairs[x].a;
        if (ensure_ints(&w->idx, &w->icap, np + 1) < 0)
            return -1;
        Py_ssize_t nc = 0;
        for (Py_ssize_t x = 0; x < np; x++)
            if (bd->pairs[x].b - bd->pairs[x].a == low)
                w->idx[nc++] = (int)x;
        return nc == 1 ? w->idx[0] : w->idx[randbelow(rng, (uint32_t)nc)];
    }
    }
    PyErr_SetString(PyExc_ValueError, "unknown player kind");
    return -1;
}

/* A game's path: 8 bytes a move (two little-endian int32 cells; an add is -1, -1). */
typedef struct {
    unsigned char *buf;
    Py_ssize_t len, cap;
} Bytes;

static inline int
bytes_put(Bytes *b, int32_t x, int32_t y)
{
    if (b->len + 8 > b->cap && ensure_cells(&b->buf, &b->cap, b->len + 8) < 0)
        return -1;
    unsigned char *p = b->buf + b->len;
    uint32_t ux = (uint32_t)x, uy = (uint32_t)y;
#if NM_WORDS
    memcpy(p, &ux, 4);
    memcpy(p + 4, &uy, 4);
#else
    for (int s = 0; s < 4; s++) {
        p[s] = (unsigned char)(ux >> (8 * s));
        p[4 + s] = (unsigned char)(uy >> (8 * s));
    }
#endif
    b->len += 8;
    return 0;
}

/* One game's numbers (its path in the caller's Bytes, a recorded game's pair counts in
 * Work.rec). */
typedef struct {
    int won, adds_used;
    long moves, collapses, openings;
    Py_ssize_t ncounts;
} Game;

/* One game (players._play) into *out, its path into *path (not kept when path is NULL); 0, or
 * -1 with an exception set. While the game is in the positions' tree (w->tree), its board is
 * the node's (`cur`, read only); it is copied into bd where it leaves the tree. */
static int
play_one(PlayerState *ps, Work *w, Board *bd, const Py_buffer *start, int adds, MTObject *rng,
         int record, long max_moves, Bytes *path, Game *out)
{
    /* begin: the scanner's eyes and the local player's row are drawn first */
    ps->cursor = 0;
    ps->focus = 0;
    if (ps->kind == P_SCANNER && start->len)
        ps->cursor = randbelow(rng, (uint32_t)start->len);
    if (ps->kind == P_LOCAL) {
        Py_ssize_t rows = (start->len + WIDTH - 1) / WIDTH;
        ps->focus = randbelow(rng, (uint32_t)(rows > 1 ? rows : 1));
    }
    if (ensure_cells(&bd->cells, &bd->cap, start->len + 1) < 0 ||
        ensure_pairs(&bd->pairs, &bd->pcap, 4 * start->len + 4) < 0)
        return -1;
    Tree *t = &w->tree;
    int32_t node = t->on ? 0 : -1; /* the node the game is at, -1 off the tree */
    Board view;
    const Board *cur = bd;
    if (node == 0) {
        tree_view(t, 0, &view);
        cur = &view;
    }
    else {
        memcpy(bd->cells, start->buf, (size_t)start->len);
        bd->n = start->len;
        memcpy(bd->pairs, w->start_pairs, (size_t)w->start_np * sizeof(Pair));
        bd->np = w->start_np;
    }
    Py_ssize_t ncounts = 0;
    if (path != NULL)
        path->len = 0;
    int adds_left = adds, adds_used = 0;
    long moves = 0, collapses = 0, openings = 0;
    while (cur->n && moves < max_moves) {
        if (record) {
            if (ensure_ints(&w->rec, &w->rcap, ncounts + 1) < 0)
                return -1;
            w->rec[ncounts++] = (int)cur->np;
        }
        Py_ssize_t k = cur->np ? choose(ps, w, cur, adds_left, rng) : -2;
        if (k == -1)
            return -1;
        if (k == -2 && adds_left <= 0) {
            if (cur->np) {
                PyErr_SetString(PyExc_ValueError, "a player chose to add with no add left");
                return -1;
            }
            break;
        }
        int i = -1, j = -1;
        if (k != -2) {
            i = cur->pairs[k].a;
            j = cur->pairs[k].b;
        }
        if (path != NULL && bytes_put(path, i, j) < 0)
            return -1;
        moves++;
        if (k == -2) {
            adds_left--;
            adds_used++;
        }
        int32_t *kids = NULL;
        int32_t child = TREE_NONE;
        if (node >= 0) {
            kids = tree_children(t, &t->nodes[node]);
            child = kids[k == -2 ? cur->np : k];
        }
        if (child >= 0) { /* the board after the move is kept: read it from there */
            const TreeNode *nd = &t->nodes[child];
            if (nd->collapsed) {
                collapses++;
                openings += nd->opened;
            }
            node = child;
            tree_view(t, node, &view);
            cur = &view;
            continue;
        }
        int32_t *slot = kids != NULL ? &kids[k == -2 ? cur->np : k] : NULL;
        if (cur != bd) { /* leaving the tree: the node's board into bd */
            if (ensure_cells(&bd->cells, &bd->cap, cur->n + 1) < 0 ||
                ensure_pairs(&bd->pairs, &bd->pcap, 4 * cur->n + 4) < 0)
                return -1;
            memcpy(bd->cells, cur->cells, (size_t)cur->n);
            bd->n = cur->n;
            memcpy(bd->pairs, cur->pairs, (size_t)cur->np * sizeof(Pair));
            bd->np = cur->np;
            cur = bd;
        }
        int collapsed = 0, opened = 0;
        if (k == -2) {
            Py_ssize_t act = active_count(bd->cells, bd->n);
            if (act > PY_SSIZE_T_MAX / 8 - bd->n) {
                PyErr_NoMemory();
                return -1;
            }
            if (ensure_cells(&bd->cells, &bd->cap, bd->n + act + 1) < 0)
                return -1;
            Py_ssize_t wpos = bd->n;
            unsigned char *cells = bd->cells;
            for (Py_ssize_t x = 0; x < bd->n; x++) { /* without branches: kept when active */
                cells[wpos] = cells[x];
                wpos += cells[x] != 0;
            }
            bd->n = wpos;
            if (board_rescan(bd) < 0)
                return -1;
        }
        else {
            if (track(bd, k, &w->gap, &w->gcap, &w->gpairs, &w->gpcap, &collapsed, &opened) < 0)
                return -1;
            if (collapsed) {
                collapses++;
                openings += opened;
            }
        }
        if (slot != NULL) { /* kept the second time a game makes this move from the node */
            node = child == TREE_SEEN ? tree_add(t, bd, collapsed, opened) : -1;
            *slot = node >= 0 ? node : TREE_SEEN;
        }
    }
    out->won = cur->n == 0;
    out->adds_used = adds_used;
    out->moves = moves;
    out->collapses = collapses;
    out->openings = openings;
    out->ncounts = record ? ncounts : -1;
    return 0;
}

/* A recorded game's pair counts as a list (an empty list when not recorded). */
static PyObject *
counts_list(const Work *w, const Game *g)
{
    Py_ssize_t nc = g->ncounts > 0 ? g->ncounts : 0;
    PyObject *counts = PyList_New(nc);
    if (counts == NULL)
        return NULL;
    for (Py_ssize_t x = 0; x < nc; x++) {
        PyObject *v = PyLong_FromLong(w->rec[x]);
        if (v == NULL) {
            Py_DECREF(counts);
            return NULL;
        }
        PyList_SET_ITEM(counts, x, v);
    }
    return counts;
}

/* A game's path as bytes */
static PyObject *
path_bytes(const Bytes *path)
{
    return PyBytes_FromStringAndSize(path->buf ? (const char *)path->buf : "", path->len);
}

/* (won, moves, adds_used, collapses, openings, path, pair counts or None) */
static PyObject *
game_tuple(const Work *w, const Game *g, const Bytes *path)
{
    PyObject *out = PyTuple_New(7);
    if (out == NULL)
        return NULL;
    PyObject *counts;
    if (g->ncounts >= 0)
        counts = counts_list(w, g);
    else {
        Py_INCREF(Py_None);
        counts = Py_None;
    }
    PyObject *items[7] = {PyBool_FromLong(g->won), PyLong_FromLong(g->moves),
                          PyLong_FromLong(g->adds_used), PyLong_FromLong(g->collapses),
                          PyLong_FromLong(g->openings), path_bytes(path), counts};
    int bad = 0;
    for (int x = 0; x < 7; x++) {
        if (items[x] == NULL)
            bad = 1;
        PyTuple_SET_ITEM(out, x, items[x]); /* a NULL item is skipped by the tuple's dealloc */
    }
    if (bad) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

/* Games as instances of the caller's Playout class (players.Playout), built here rather than
 * from tuples in Python: the class's slots, in this order, are set as players._compiled_playout
 * sets them. The class is checked once (and kept): a type whose instances object.__new__ makes,
 * each name a writable object slot of it. */
#define PL_SLOTS 10
static const char *const PL_NAMES[PL_SLOTS] = {
    "won", "moves", "adds_used", "collapses", "openings", "_code", "pair_counts", "_path",
    "_positions", "_start",
};
enum { PL_WON, PL_MOVES, PL_ADDS, PL_COLLAPSES, PL_OPENINGS, PL_CODE, PL_COUNTS, PL_PATH,
       PL_POSITIONS, PL_START };
static PyTypeObject *pl_type = NULL; /* a strong reference once checked */
static Py_ssize_t pl_off[PL_SLOTS];

static int
playout_layout(PyObject *cls)
{
    if ((PyObject *)pl_type == cls)
        return 0;
    if (!PyType_Check(cls)) {
        PyErr_Format(PyExc_ValueError, "play: the playout class must be a type, got %.100s",
                     Py_TYPE(cls)->tp_name);
        return -1;
    }
    PyTypeObject *tp = (PyTypeObject *)cls;
    if (tp->tp_itemsize != 0 || tp->tp_new != PyBaseObject_Type.tp_new || tp->tp_alloc == NULL ||
        !PyType_HasFeature(tp, Py_TPFLAGS_HAVE_GC) ||
        tp->tp_basicsize < (Py_ssize_t)sizeof(PyObject)) {
        PyErr_Format(PyExc_ValueError, "play: %.100s is not a plain class with slots", tp->tp_name);
        return -1;
    }
    Py_ssize_t off[PL_SLOTS];
    for (int x = 0; x < PL_SLOTS; x++) {
        PyObject *d = PyObject_GetAttrString(cls, PL_NAMES[x]);
        if (d == NULL) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "play: %.100s has no slot %s", tp->tp_name,
                         PL_NAMES[x]);
            return -1;
        }
        int ok = Py_IS_TYPE(d, &PyMemberDescr_Type) &&
                 PyType_IsSubtype(tp, PyDescr_TYPE(d));
        if (ok) {
            PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
            off[x] = m->offset;
            ok = m->type == NM_T_OBJECT_EX && !(m->flags & NM_READONLY) &&
                 m->offset >= (Py_ssize_t)sizeof(PyObject) &&
                 m->offset <= tp->tp_basicsize - (Py_ssize_t)sizeof(PyObject *);
            for (int y = 0; ok && y < x; y++)
                ok = off[y] != off[x];
        }
        Py_DECREF(d);
        if (!ok) {
            PyErr_Format(PyExc_ValueError, "play: %.100s.%s is not an object slot", tp->tp_name,
                         PL_NAMES[x]);
            return -1;
        }
    }
    memcpy(pl_off, off, sizeof off);
    Py_INCREF(tp);
    Py_XSETREF(pl_type, tp);
    return 0;
}

/* One game as a playout (tp checked by playout_layout, its offsets); `start` is the recorded game's (cells, adds), or
 * NULL. */
static PyObject *
game_playout(PyTypeObject *tp, const Py_ssize_t *off, const Work *w, const Game *g,
             const Bytes *path, PyObject *start)
{
    PyObject *o = tp->tp_alloc(tp, 0);
    if (o == NULL)
        return NULL;
    PyObject *v[PL_SLOTS];
    v[PL_WON] = PyBool_FromLong(g->won);
    v[PL_MOVES] = PyLong_FromLong(g->moves);
    v[PL_ADDS] = PyLong_FromLong(g->adds_used);
    v[PL_COLLAPSES] = PyLong_FromLong(g->collapses);
    v[PL_OPENINGS] = PyLong_FromLong(g->openings);
    v[PL_CODE] = path_bytes(path);
    v[PL_COUNTS] = counts_list(w, g);
    Py_INCREF(Py_None);
    v[PL_PATH] = Py_None;
    if (start != NULL) {
        Py_INCREF(Py_None);
        v[PL_POSITIONS] = Py_None;
        Py_INCREF(start);
        v[PL_START] = start;
    }
    else {
        v[PL_POSITIONS] = PyList_New(0);
        Py_INCREF(Py_None);
        v[PL_START] = Py_None;
    }
    int bad = 0;
    for (int x = 0; x < PL_SLOTS; x++) {
        if (v[x] == NULL)
            bad = 1;
        *(PyObject **)((char *)o + off[x]) = v[x]; /* a NULL slot is skipped when o goes */
    }
    if (bad) {
        Py_DECREF(o);
        return NULL;
    }
    /* Out of the cyclic collector's sight: a playout and its lists of numbers refer to no
     * container that could lead back to them (what players.Playout fills in later, its path
     * and positions, holds moves and positions only), so they go by reference counting; the
     * collector's passes over a rating's tens of thousands of them cost about a tenth of it. */
    PyObject_GC_UnTrack(v[PL_COUNTS]);
    if (v[PL_POSITIONS] != Py_None)
        PyObject_GC_UnTrack(v[PL_POSITIONS]);
    PyObject_GC_UnTrack(o);
    return o;
}

/* core.play, or core.tally (`tally`: the games' sums instead of the games). */
static PyObject *
play_batch(PyObject *args, int tally)
{
    int kind, param, adds, record;
    Py_ssize_t games;
    long max_moves;
    PyObject *obj, *rngobj, *cls = Py_None;
    if (!PyArg_ParseTuple(args, tally ? "iiOinO!pl:tally" : "iiOinO!pl|O:play", &kind, &param,
                          &obj, &adds, &games, &MTType, &rngobj, &record, &max_moves, &cls))
        return bad_call();
    if (kind < 0 || kind >= P_KINDS) {
        PyErr_Format(PyExc_ValueError, "play: unknown player kind %d", kind);
        return NULL;
    }
    if (param < 0 || param > 64 || (kind == P_PLANNER && param < 1)) {
        PyErr_Format(PyExc_ValueError, "play: player parameter %d out of range", param);
        return NULL;
    }
    if (adds < 0 || adds > 64) {
        PyErr_Format(PyExc_ValueError, "play: adds %d out of range 0-64", adds);
        return NULL;
    }
    if (games < 0 || games > 1000000) {
        PyErr_Format(PyExc_ValueError, "play: games %zd out of range", games);
        return NULL;
    }
    if (max_moves < 0 || max_moves > 1000000) {
        PyErr_Format(PyExc_ValueError, "play: max_moves %ld out of range", max_moves);
        return NULL;
    }
    /* games as instances of cls (players.Playout) when given, else as tuples */
    PyTypeObject *tp = NULL;
    Py_ssize_t off[PL_SLOTS] = {0}; /* read only with tp, which sets it (gcc cannot tell) */
    if (cls != Py_None) {
        if (playout_layout(cls) < 0)
            return NULL;
        tp = pl_type;
        Py_INCREF(tp); /* a call made during this one may check another class */
        memcpy(off, pl_off, sizeof off);
    }
    Py_buffer view;
    if (get_cells_max(obj, &view, MAX_INPUT_CELLS) < 0) {
        Py_XDECREF(tp);
        return NULL;
    }
    PyObject *start = NULL;
    if (tp != NULL && record && (start = Py_BuildValue("(Oi)", obj, adds)) == NULL) {
        PyBuffer_Release(&view);
        Py_DECREF(tp);
        return NULL;
    }
    MTObject *rng = (MTObject *)rngobj;
    PlayerState ps = {kind, param, 0, 0};
    /* The buffers stay between calls (the screen plays one game a call); a call made while
     * another runs (a finalizer during an allocation) gets buffers of its own. */
    static Work kept_w;
    static Board kept_bd;
    static Bytes kept_path;
    static int busy = 0;
    Work own_w;
    Board own_bd;
    Bytes own_path = {NULL, 0, 0};
    int mine = busy;
    Work *w = &kept_w;
    Board *bd = &kept_bd;
    Bytes *path = &kept_path;
    if (mine) {
        memset(&own_w, 0, sizeof own_w);
        memset(&own_bd, 0, sizeof own_bd);
        w = &own_w;
        bd = &own_bd;
        path = &own_path;
    }
    else
        busy = 1;
    PyObject *out = NULL;
    if (ensure_pairs(&w->start_pairs, &w->start_pcap, 4 * view.len + 4) < 0)
        goto done;
    w->start_np = scan(view.buf, view.len, w->start_pairs);
    if (!mine) /* a call inside another plays without the tree (it is that call's) */
        tree_start(&w->tree, view.buf, view.len, w->start_pairs, w->start_np);
    if (tally) {
        /* wins, moves, pair counts recorded (steps) and their sum, collapses, openings */
        long long sums[6] = {0, 0, 0, 0, 0, 0};
        for (Py_ssize_t g = 0; g < games; g++) {
            Game game;
            if (play_one(&ps, w, bd, &view, adds, rng, record, max_moves, NULL, &game) < 0)
                goto done;
            sums[0] += game.won;
            sums[1] += game.moves;
            if (game.ncounts > 0) {
                sums[2] += game.ncounts;
                for (Py_ssize_t x = 0; x < game.ncounts; x++)
                    sums[3] += w->rec[x];
            }
            sums[4] += game.collapses;
            sums[5] += game.openings;
        }
        out = PyTuple_New(6);
        if (out == NULL)
            goto done;
        for (int x = 0; x < 6; x++) {
            PyObject *v = PyLong_FromLongLong(sums[x]);
            if (v == NULL) {
                Py_CLEAR(out);
                goto done;
            }
            PyTuple_SET_ITEM(out, x, v);
        }
        goto done;
    }
    out = PyList_New(games);
    if (out == NULL)
        goto done;
    for (Py_ssize_t g = 0; g < games; g++) {
        Game game;
        PyObject *r = NULL;
        if (play_one(&ps, w, bd, &view, adds, rng, record, max_moves, path, &game) == 0)
            r = tp != NULL ? game_playout(tp, off, w, &game, path, start)
                           : game_tuple(w, &game, path);
        if (r == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, g, r);
    }
done:
    PyBuffer_Release(&view);
    Py_XDECREF(start);
    Py_XDECREF(tp);
    if (mine) {
        work_free(w);
        board_free(bd);
        PyMem_Free(path->buf);
    }
    else
        busy = 0;
    return out;
}

static PyObject *
core_play(PyObject *Py_UNUSED(mod), PyObject *args)
{
    return play_batch(args, 0);
}

static PyObject *
core_tally(PyObject *Py_UNUSED(mod), PyObject *args)
{
    return play_batch(args, 1);
}

/* ---------------------------------------------------------------------------------------- */
/* The solver's random playouts (solver.search._playouts)                                    */

/* random.Random.random(): 53 bits from two words */
static double
random_double(MTObject *rng)
{
    uint32_t a = genrand_uint32(rng) >> 5;
    uint32_t b = genrand_uint32(rng) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

/* whether cancelling adjacent equal classes of the active cells leaves nothing (a stack) */
static int
stack_cancels(const unsigned char *cells, Py_ssize_t n, unsigned char *stack)
{
    Py_ssize_t top = 0;
    for (Py_ssize_t x = 0; x < n; x++) {
        unsigned char k = CLASS[cells[x]];
        if (!k)
            continue;
        if (top && stack[top - 1] == k)
            top--;
        else
            stack[top++] = k;
    }
    return top == 0;
}

enum { PO_NONE, PO_WON, PO_STACK, PO_OUT };

static PyObject *
core_playouts(PyObject *Py_UNUSED(mod), PyObject *args)
{
    PyObject *obj, *rngobj;
    int adds, stack;
    Py_ssize_t count, left, max_cells;
    if (!PyArg_ParseTuple(args, "OinO!pnn:playouts", &obj, &adds, &count, &MTType, &rngobj, &stack,
                          &left, &max_cells))
        return bad_call();
    if (adds < 0 || adds > 64 || count < 0 || count > 1000000 || left < -1 || max_cells < 0 ||
        max_cells > 1000000) {
        PyErr_SetString(PyExc_ValueError, "playouts: adds, count, nodes or cell cap out of range");
        return NULL;
    }
    Py_buffer view;
    if (get_cells_max(obj, &view, MAX_INPUT_CELLS) < 0)
        return NULL;
    MTObject *rng = (MTObject *)rngobj;
    Py_ssize_t cap = max_cells > view.len ? max_cells : view.len;
    unsigned char *c = PyMem_Malloc((size_t)cap + 1);
    unsigned char *scratch = PyMem_Malloc((size_t)cap + 1);
    Pair *geo = PyMem_Malloc((size_t)(4 * cap + 4) * sizeof(Pair));
    Bytes path = {NULL, 0, 0};
    PyObject *out = NULL;
    if (c == NULL || scratch == NULL || geo == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Pair *read = geo + 3 * cap + 2;
    Py_ssize_t ticks = 0;
    int status = PO_NONE;
    Py_ssize_t n = 0;
    for (Py_ssize_t g = 0; g < count && status == PO_NONE; g++) {
        memcpy(c, view.buf, (size_t)view.len);
        n = view.len;
        int a = adds;
        path.len = 0;
        while (n) {
            ticks++;
            if (left >= 0 && ticks == left + 1) {
                status = PO_OUT;
                break;
            }
            if (stack && stack_cancels(c, n, scratch)) {
                status = PO_STACK;
                break;
            }
            Py_ssize_t ng, nr;
            scan_split(c, n, geo, &ng, read, &nr);
            if (ng + nr) {
                memmove(geo + ng, read, (size_t)nr * sizeof(Pair));
                Py_ssize_t k = random_double(rng) < 0.7 ? (Py_ssize_t)randbelow(rng, (uint32_t)(ng + nr))
                                                        : 0;
                int i = geo[k].a, j = geo[k].b;
                if (bytes_put(&path, i, j) < 0)
                    goto done;
                remove_in_place(c, &n, i, j);
            }
            else if (a) {
                if (bytes_put(&path, -1, -1) < 0)
                    goto done;
                Py_ssize_t act = active_count(c, n);
                if (n + act > max_cells) {
                    status = PO_OUT;
                    break;
                }
                Py_ssize_t w = n;
                for (Py_ssize_t x = 0; x < n; x++)
                    if (c[x])
                        c[w++] = c[x];
                n = w;
                a--;
            }
            else
                break;
        }
        if (status == PO_NONE && n == 0)
            status = PO_WON;
    }
    out = Py_BuildValue("(iy#ny#)", status, (const char *)(path.buf ? path.buf : (unsigned char *)""),
                        status == PO_NONE ? (Py_ssize_t)0 : path.len, ticks, (const char *)c,
                        status == PO_STACK ? n : (Py_ssize_t)0);
done:
    PyBuffer_Release(&view);
    PyMem_Free(c);
    PyMem_Free(scratch);
    PyMem_Free(geo);
    PyMem_Free(path.buf);
    return out;
}

/* random.Random.seed(a) for an int a: init_by_array over the 32-bit words of |a|, least
 * significant first (`key`: those words as little-endian bytes, 4 a word, at least one word),
 * as CPython's _randommodule.c seeds. */
static PyObject *
core_seeded_mt(PyObject *Py_UNUSED(mod), PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "seeded_mt: the key must be bytes, got %.100s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    Py_ssize_t words = view.len / 4;
    if (view.len % 4 != 0 || words < 1 || words > MAX_KEY_WORDS) {
        PyErr_Format(PyExc_ValueError, "seeded_mt: the key must be 1-%d words of 4 bytes, got %zd "
                     "bytes", MAX_KEY_WORDS, view.len);
        PyBuffer_Release(&view);
        return NULL;
    }
    uint32_t key[MAX_KEY_WORDS];
    const unsigned char *k8 = view.buf;
    for (Py_ssize_t w = 0; w < words; w++)
        key[w] = (uint32_t)k8[4 * w] | (uint32_t)k8[4 * w + 1] << 8 |
                 (uint32_t)k8[4 * w + 2] << 16 | (uint32_t)k8[4 * w + 3] << 24;
    PyBuffer_Release(&view);
    MTObject *self = (MTObject *)MTType.tp_alloc(&MTType, 0);
    if (self == NULL)
        return NULL;
    uint32_t *mt = self->mt;
    mt[0] = 19650218U;
    for (int x = 1; x < MT_N; x++)
        mt[x] = 1812433253U * (mt[x - 1] ^ (mt[x - 1] >> 30)) + (uint32_t)x;
    size_t i = 1, j = 0, length = (size_t)words;
    for (size_t left = MT_N > length ? MT_N : length; left; left--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525U)) + key[j] + (uint32_t)j;
        i++;
        j++;
        if (i >= MT_N) {
            mt[0] = mt[MT_N - 1];
            i = 1;
        }
        if (j >= length)
            j = 0;
    }
    for (size_t left = MT_N - 1; left; left--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941U)) - (uint32_t)i;
        i++;
        if (i >= MT_N) {
            mt[0] = mt[MT_N - 1];
            i = 1;
        }
    }
    mt[0] = 0x80000000U;
    self->index = MT_N;
    return (PyObject *)self;
}

static PyMethodDef core_methods[] = {
    {"legal_pairs", core_legal_pairs, METH_O,
     "rules.legal_pairs: every legal pair (i, j), i < j, sorted."},
    {"has_legal_pair", core_has_legal_pair, METH_O, "rules.has_legal_pair."},
    {"scan_pairs", core_scan_pairs, METH_O,
     "rules.scan_pairs: (ray pairs, reading-order pairs), each in scan order."},
    {"pairs_ordered", core_pairs_ordered, METH_O,
     "rules.pairs_ordered: ray-only pairs first, then reading-order ones."},
    {"remove_pair", core_remove_pair, METH_VARARGS,
     "rules.remove_pair(cells, i, j): both cells become gaps, emptied rows go."},
    {"add_numbers", core_add_numbers, METH_O,
     "rules.add_numbers: the active values appended in reading order."},
    {"pair_counts_after", core_pair_counts_after, METH_O,
     "players.pair_counts_after(cells, legal_pairs(cells)): pairs left after each pair."},
    {"track", core_track, METH_VARARGS,
     "players.remove_and_track(cells, pairs, i, j) as (cells, pairs, collapsed, opened); "
     "ValueError unless (i, j) is legal."},
    {"play", core_play, METH_VARARGS,
     "play(kind, param, cells, adds, games, mt, record, max_moves[, cls]): a batch of games, "
     "each (won, moves, adds_used, collapses, openings, path, pair_counts or None); the path is "
     "8 bytes a move (two little-endian int32 cells, -1 -1 for an add). With cls (the "
     "players.Playout class), each an instance of it, its slots set as "
     "players._compiled_playout sets them."},
    {"tally", core_tally, METH_VARARGS,
     "tally(kind, param, cells, adds, games, mt, record, max_moves): the batch play() would "
     "play, as the sums (wins, moves, pair counts recorded, their sum, collapses, openings) "
     "players.Tally holds; the stream advances as by play()."},
    {"seeded_mt", core_seeded_mt, METH_O,
     "seeded_mt(key) -> MT as random.Random(a) seeds it, for the int a whose 32-bit words, "
     "least significant first, are key (little-endian, 4 bytes a word)."},
    {"playouts", core_playouts, METH_VARARGS,
     "solver.search._playouts: playouts(cells, adds, count, mt, stack, nodes_left, max_cells) "
     "-> (status, path, nodes, cells): status 0 none won, 1 won (path), 2 the stack cancels "
     "on cells (path so far), 3 out of budget."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "pipeline.engine._core",
    "The compiled core of the rules engine and the simulated players (see pipeline.engine.backend).",
    -1, core_methods,
};

PyMODINIT_FUNC
PyInit__core(void)
{
    if (PyType_Ready(&MTType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&core_module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&MTType);
    if (PyModule_AddObject(m, "MT", (PyObject *)&MTType) < 0 ||
        PyModule_AddIntConstant(m, "MAX_INPUT_CELLS", MAX_INPUT_CELLS) < 0 ||
        PyModule_AddStringConstant(m, "SOURCE_SHA256", NM_SOURCE_SHA256) < 0 ||
        PyModule_AddIntConstant(m, "RANDOM", P_RANDOM) < 0 ||
        PyModule_AddIntConstant(m, "SCANNER", P_SCANNER) < 0 ||
        PyModule_AddIntConstant(m, "LOOKAHEAD", P_LOOKAHEAD) < 0 ||
        PyModule_AddIntConstant(m, "OPENER", P_OPENER) < 0 ||
        PyModule_AddIntConstant(m, "LOCAL", P_LOCAL) < 0 ||
        PyModule_AddIntConstant(m, "PLANNER", P_PLANNER) < 0 ||
        PyModule_AddIntConstant(m, "PROXIMITY", P_PROXIMITY) < 0 ||
        PyModule_AddIntConstant(m, "PLAYOUTS_NONE", PO_NONE) < 0 ||
        PyModule_AddIntConstant(m, "PLAYOUTS_WON", PO_WON) < 0 ||
        PyModule_AddIntConstant(m, "PLAYOUTS_STACK", PO_STACK) < 0 ||
        PyModule_AddIntConstant(m, "PLAYOUTS_OUT", PO_OUT) < 0) {
        Py_DECREF(&MTType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

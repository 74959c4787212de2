/* The compiled baseline for `bmn bench`: a plain C player of the two-player rules of
 * docs/rules.md, written the obvious way (one card at a time from ring buffers) and compiled
 * with the C compiler's best optimisation. It plays what `bmn bench` plays: uniformly random
 * standard 26/26 deals, every game to its end or its first repeated trick-boundary state
 * (Brent's algorithm, exact, no card cap).
 *
 * Usage: baseline SECONDS [SEED]   prints "games_per_s N" on its last line.
 * benchmarks/compare.sh builds it and runs it beside `bmn bench`, one core each, alternating. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CARDS 52
#define RING 64 /* a power of two holding every card */

typedef struct {
    uint8_t card[2][RING];
    uint32_t top[2], n[2];
    int leader;
} State;

static uint64_t splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* A uniformly random deal: Fisher-Yates over the whole deck. */
static void random_deal(uint8_t *deck, uint64_t *rng) {
    for (int i = CARDS - 1; i > 0; i--) {
        int j = (int)(((splitmix(rng) >> 32) * (uint64_t)(i + 1)) >> 32);
        uint8_t t = deck[i];
        deck[i] = deck[j];
        deck[j] = t;
    }
}

static inline int take_top(State *s, int p) {
    int c = s->card[p][s->top[p] & (RING - 1)];
    s->top[p]++;
    s->n[p]--;
    return c;
}

/* One trick from a trick boundary; returns the cards played, sets *over when the game ended. */
static int trick(State *s, uint8_t *pile, int *over) {
    int p = s->leader, owed = 0, creditor = -1, played = 0;
    for (;;) {
        if (s->n[p] == 0) { /* p must play and cannot: the other player takes the pile */
            int w = p ^ 1;
            for (int i = 0; i < played; i++) s->card[w][(s->top[w] + s->n[w] + i) & (RING - 1)] = pile[i];
            s->n[w] += played;
            *over = 1;
            return played;
        }
        int c = take_top(s, p);
        pile[played++] = c;
        if (c) { /* a penalty card: the other player pays */
            owed = c;
            creditor = p;
            p ^= 1;
        } else if (creditor >= 0) {
            if (--owed == 0) { /* payment complete: the creditor takes the pile, in played order */
                int w = creditor;
                for (int i = 0; i < played; i++) s->card[w][(s->top[w] + s->n[w] + i) & (RING - 1)] = pile[i];
                s->n[w] += played;
                s->leader = w;
                *over = s->n[w ^ 1] == 0;
                return played;
            }
        } else {
            p ^= 1;
        }
    }
}

static int same(const State *a, const State *b) {
    if (a->leader != b->leader || a->n[0] != b->n[0] || a->n[1] != b->n[1]) return 0;
    for (int p = 0; p < 2; p++)
        for (uint32_t i = 0; i < a->n[p]; i++)
            if (a->card[p][(a->top[p] + i) & (RING - 1)] != b->card[p][(b->top[p] + i) & (RING - 1)]) return 0;
    return 1;
}

/* Plays one deal; returns the cards played (for a cycle: up to the first repeat found). */
static long play(const uint8_t *deal, int *cycle) {
    State s, saved;
    uint8_t pile[CARDS];
    memset(&s, 0, sizeof s);
    memcpy(s.card[0], deal, 26);
    memcpy(s.card[1], deal + 26, 26);
    s.n[0] = s.n[1] = 26;
    long cards = 0;
    long power = 1, lam = 0;
    int over = 0;
    saved = s;
    *cycle = 0;
    for (;;) {
        cards += trick(&s, pile, &over);
        if (over) return cards;
        lam++;
        if (same(&s, &saved)) {
            *cycle = 1;
            return cards;
        }
        if (lam == power) {
            saved = s;
            power *= 2;
            lam = 0;
        }
    }
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 3.0;
    uint64_t rng = argc > 2 ? strtoull(argv[2], 0, 10) : 2024;
    uint8_t deck[CARDS];
    for (int i = 0; i < CARDS; i++) deck[i] = i < 36 ? 0 : (uint8_t)(1 + (i - 36) / 4);
    long long games = 0, cards = 0, cycles = 0;
    double t0 = now(), t1;
    do {
        for (int g = 0; g < 20000; g++) {
            int cycle;
            random_deal(deck, &rng);
            cards += play(deck, &cycle);
            cycles += cycle;
        }
        games += 20000;
        t1 = now();
    } while (t1 - t0 < seconds);
    printf("mean_cards %.1f cycles %lld ns_per_card %.2f\n", (double)cards / games, cycles,
           (t1 - t0) * 1e9 / cards);
    printf("games_per_s %.0f\n", games / (t1 - t0));
    return 0;
}

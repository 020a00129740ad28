/*
 * layout.c -- the layered layout of a graph's picture, in character cells.
 *
 * The question: given a graph as stages of blocks (a box per node, sequences,
 * forks of branches side by side, titled frames around a block), where does
 * every box, frame, wire and row of plane names go so that the text picture
 * reads as seeds 001 and 002 print it, and how do the edges that skip over
 * other nodes (long links) reach their ends without crossing a box?
 *
 * Layers.  Each stage is one layer band and the stages run top to bottom in
 * run order (the stage assignment is the graph's own: a stage waits for the
 * one before).  Inside a stage the blocks form a series-parallel tree, so the
 * layers and the order within each layer follow from the tree: a fork's
 * branches stand left to right in add order.  No crossing reduction reorders
 * them (Sugiyama, Tagawa and Toda's barycenter sweeps would): the order is
 * the graph's, every face pins it, and wires between consecutive blocks of a
 * series-parallel tree drawn this way never cross.
 *
 * Coordinates.  Two passes over the tree, as in Reingold and Tilford's tidy
 * drawing of trees: `measure` sizes every block bottom up (width, height,
 * the column its wires meet, its entries and exits), `place` gives each its
 * top left corner top down.  The geometry, read off the seeds' pictures:
 *  - a box is three rows, its width odd so that a wire meets its centre, and
 *    one space either side of its text; a box alone in a frame widens to
 *    fill it;
 *  - the blocks of a sequence are aligned on one column (their anchor); a box
 *    that is followed has one row under it for the names of the planes it
 *    passes on, cut to its room;
 *  - the branches of a fork stand GAP columns apart; a splitter row leads
 *    into them when something comes before, a joiner row out of them when
 *    something comes after; a fork's anchor is the branch wire nearest the
 *    middle when it is within two columns (no two ticks side by side);
 *  - a frame is one row above and below its body, two columns either side,
 *    at least as wide as its title;
 *  - the stage labels stand in a column on the left, on the row of the
 *    stage's first box; stages may flow into several columns, joined by a
 *    wire down, along the bottom and up a gutter.
 *
 * Long links.  A data edge between owners no wire joins is routed after the
 * placement, shortest span first, by Lee's maze routing (Dijkstra's shortest
 * path on the grid of cells, each state a cell and the direction it was
 * entered in) with a cost per bend and per crossing: boxes and text are
 * obstacles, a wire or frame border may be crossed but never run along, a
 * vertical run inside the drawing costs twice one in the lanes right of it,
 * so long links leave the drawing and run down the gutter, the shorter ones
 * nearer (routed first, they nest instead of crossing).  A link leaves its
 * source through the middle of a side and enters its destination likewise.
 * Where no route keeps to those rules (nested frames, crowded lanes), the
 * grid is widened by one lane at a time and the search run again, so a link
 * still only crosses lines (a link run along a line, or over text, would not
 * show in the text picture): a picture never loses an edge, never crosses a
 * box, and a link with no route at all fails the call.
 * Work: O(links * cells log cells) over each link's band of rows.
 *
 * References:
 *  [1] E. M. Reingold, J. S. Tilford, "Tidier drawings of trees", IEEE TSE
 *      7(2), 1981.
 *  [2] K. Sugiyama, S. Tagawa, M. Toda, "Methods for visual understanding of
 *      hierarchical system structures", IEEE SMC 11(2), 1981.
 *  [3] C. Y. Lee, "An algorithm for path connections and its applications",
 *      IRE Trans. Electronic Computers EC-10(3), 1961.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum {
    GAP = 3,      /* columns between sibling branches */
    GUTTER = 6,   /* columns between the columns of a long graph */
    BOX_ROWS = 3, /* top border, text, bottom border */
    BEND = 6,     /* routing: the cost of a bend */
    CROSS = 3,    /* routing: the cost of crossing a wire or border */
    OVER = 40,    /* the fallback route: the cost of a cell shared with a long link before it */
};

typedef struct size {
    int32_t w, h, anchor, label_row, entries, exits;
} size;

typedef struct port {
    int32_t node, x, y, below, room; /* below, room: an exit's row of plane names */
} port;

typedef struct ports {
    port *v;
    int32_t n, cap;
} ports;

typedef struct engine {
    const eagle_layout_input *in;
    eagle_layout *out;
    int32_t *end;   /* block -> the index after its subtree */
    int32_t *stage; /* stage -> its block */
    int32_t *box_w; /* node -> the width a frame widened its box to, 0 */
    size *sizes;    /* block -> its size, once measured */
    uint8_t *sized; /* block -> measured */
    ports exits;    /* every exit a wire leaves from */
    int status;
} engine;

#define OUT_GROW(e, field, count, cap)                                                             \
    (GROW((e)->out->field, (e)->out->count, (e)->out->caps[cap]) ? ((e)->status = EAGLE_ERR_NOMEM) \
                                                                 : 0)

static int32_t max32(int32_t a, int32_t b) { return a > b ? a : b; }
static int32_t min32(int32_t a, int32_t b) { return a < b ? a : b; }
static int32_t abs32(int32_t a) { return a < 0 ? -a : a; }

static void push_port(engine *e, ports *p, port value)
{
    if (GROW(p->v, p->n, p->cap)) {
        e->status = EAGLE_ERR_NOMEM;
        return;
    }
    p->v[p->n++] = value;
}

/* ------------------------------------------------------------ the tree */

/* Whether block b is well formed on its own: a known kind with the children it may have. */
static int block_ok(const eagle_layout_input *in, const eagle_layout_block *b)
{
    switch (b->kind) {
    case EAGLE_LAYOUT_BOX:
        return b->count == 0 && b->node >= 0 && b->node < in->n_nodes;
    case EAGLE_LAYOUT_FRAME:
        return b->count == 1;
    case EAGLE_LAYOUT_SEQ:
    case EAGLE_LAYOUT_FORK:
        return b->count >= 1;
    default:
        return 0;
    }
}

/* end[i] for every block of the subtree at i; its end, or -1 when it is malformed or runs past
 * the input.  Recursion is as deep as the tree (frames in forks in sequences: a few levels). */
static int32_t subtree_end(const eagle_layout_input *in, int32_t *end, int32_t i)
{
    const eagle_layout_block *b = &in->blocks[i];
    int32_t j = i + 1;
    if (!block_ok(in, b))
        return -1;
    for (int32_t c = 0; c < b->count; ++c) {
        if (j >= in->n_blocks || (j = subtree_end(in, end, j)) < 0)
            return -1;
    }
    return end[i] = j;
}

/* --------------------------------------------------------- measuring */

static size measure(engine *e, int32_t i);

static int32_t between(size before, size after)
{
    return 1 + (before.exits > 1) + (after.entries > 1);
}

/* Where a frame's body starts: two columns in, centred in what is left. */
static int32_t inset(int32_t frame_w, int32_t body_w) { return 2 + (frame_w - 4 - body_w) / 2; }

/* The size of blocks idx[0..n) one under another on one anchor. */
static size seq_size(engine *e, const int32_t *idx, int32_t n)
{
    size s = {0}, prev = {0};
    for (int32_t k = 0; k < n; ++k)
        s.anchor = max32(s.anchor, measure(e, idx[k]).anchor);
    for (int32_t k = 0; k < n; ++k) {
        size c = measure(e, idx[k]);
        s.w = max32(s.w, s.anchor - c.anchor + c.w);
        s.h += c.h + (k ? between(prev, c) : 0);
        if (!k) {
            s.label_row = c.label_row;
            s.entries = c.entries;
        }
        s.exits = c.exits;
        prev = c;
    }
    return s;
}

/* The children of block i, into kids (count of them). */
static int32_t *children(engine *e, int32_t i)
{
    int32_t n = e->in->blocks[i].count;
    int32_t *kids = malloc((size_t)n * sizeof *kids);
    if (!kids) {
        e->status = EAGLE_ERR_NOMEM;
        return NULL;
    }
    for (int32_t c = 0, j = i + 1; c < n; ++c, j = e->end[j])
        kids[c] = j;
    return kids;
}

static size measure_fork(engine *e, int32_t i)
{
    int32_t n = e->in->blocks[i].count, x = 0, first = 0, middle, near = 0;
    int32_t *kids = children(e, i);
    size s = {0}, last = {0};
    if (!kids)
        return s;
    s.label_row = INT32_MAX;
    for (int32_t c = 0; c < n; ++c) {
        size k = measure(e, kids[c]);
        if (!c)
            first = x + k.anchor;
        s.h = max32(s.h, k.h);
        s.label_row = min32(s.label_row, k.label_row);
        s.entries += k.entries;
        s.exits += k.exits;
        last = k;
        x += k.w + GAP;
    }
    x -= last.w + GAP;
    middle = (first + x + last.anchor) / 2;
    s.w = x + last.w;
    /* a branch's wire a column or two off the middle takes the tick: no two ticks side by side */
    int32_t best = INT32_MAX;
    for (int32_t c = 0, bx = 0; c < n; ++c) {
        size k = measure(e, kids[c]);
        if (abs32(bx + k.anchor - middle) < best) {
            best = abs32(bx + k.anchor - middle);
            near = bx + k.anchor;
        }
        bx += k.w + GAP;
    }
    s.anchor = best <= 2 ? near : middle;
    free(kids);
    return s;
}

static size measure_frame(engine *e, int32_t i)
{
    const eagle_layout_block *b = &e->in->blocks[i], *body = b + 1;
    size inner = measure(e, i + 1), s;
    s.w = max32(inner.w + 4, b->width + 6);
    if (body->kind == EAGLE_LAYOUT_BOX) { /* a box alone fills its frame (seed 001's combine) */
        s.w = ((s.w - 4) | 1) + 4;
        e->box_w[body->node] = s.w - 4;
        e->sized[i + 1] = 0;
        inner = measure(e, i + 1);
    }
    s.h = inner.h + 2;
    s.anchor = inset(s.w, inner.w) + inner.anchor;
    s.label_row = 1 + inner.label_row;
    s.entries = inner.entries;
    s.exits = inner.exits;
    return s;
}

static size measure(engine *e, int32_t i)
{
    if (e->sized[i])
        return e->sizes[i];
    const eagle_layout_block *b = &e->in->blocks[i];
    size s = {0};
    if (b->kind == EAGLE_LAYOUT_BOX) {
        int32_t w = e->box_w[b->node] ? e->box_w[b->node] : (b->width + 4) | 1;
        s = (size){w, BOX_ROWS, w / 2, 0, 1, 1};
    } else if (b->kind == EAGLE_LAYOUT_FRAME) {
        s = measure_frame(e, i);
    } else if (b->kind == EAGLE_LAYOUT_FORK) {
        s = measure_fork(e, i);
    } else {
        int32_t *kids = children(e, i);
        if (kids)
            s = seq_size(e, kids, b->count);
        free(kids);
    }
    e->sizes[i] = s;
    e->sized[i] = 1;
    return s;
}

/* ------------------------------------------------------------ placing */

static void add_point(engine *e, int32_t x, int32_t y)
{
    if (OUT_GROW(e, points, n_points, 0))
        return;
    e->out->points[e->out->n_points++] = (eagle_layout_point){x, y};
}

/* The path through pts[0..n) without repeated points or points in the middle of a straight run. */
static int32_t add_corners(engine *e, const eagle_layout_point *pts, int32_t n, int32_t first)
{
    eagle_layout *o = e->out;
    for (int32_t k = 0; k < n && !e->status; ++k) {
        eagle_layout_point p = pts[k];
        int32_t have = o->n_points - first;
        if (have && o->points[o->n_points - 1].x == p.x && o->points[o->n_points - 1].y == p.y)
            continue;
        if (have >= 2) {
            eagle_layout_point a = o->points[o->n_points - 2], b = o->points[o->n_points - 1];
            if ((a.x == b.x && b.x == p.x) || (a.y == b.y && b.y == p.y)) {
                o->points[o->n_points - 1] = p;
                continue;
            }
        }
        add_point(e, p.x, p.y);
    }
    return o->n_points - first;
}

typedef struct route {
    int over;               /* 0: down between blocks; 1: over to the next column */
    int32_t anchor, row;    /* down: the wires' column and the row of plane names */
    int join, split;        /* down: a joiner row, a splitter row */
    int32_t gutter, bottom; /* over */
} route;

/* Wire every exit to every entry along r; each exit gets its row of plane names. */
static void connect(engine *e, const ports *exits, const ports *entries, route r)
{
    for (int32_t a = 0; a < exits->n; ++a) {
        push_port(e, &e->exits, exits->v[a]);
        for (int32_t b = 0; b < entries->n && !e->status; ++b) {
            port x = exits->v[a], n = entries->v[b];
            eagle_layout_point pts[6];
            int32_t k = 0;
            pts[k++] = (eagle_layout_point){x.x, x.y};
            if (r.over) {
                pts[k++] = (eagle_layout_point){x.x, r.bottom};
                pts[k++] = (eagle_layout_point){r.gutter, r.bottom};
                pts[k++] = (eagle_layout_point){r.gutter, 0};
                pts[k++] = (eagle_layout_point){n.x, 0};
            } else {
                if (r.join) {
                    pts[k++] = (eagle_layout_point){x.x, r.row + 1};
                    pts[k++] = (eagle_layout_point){r.anchor, r.row + 1};
                }
                if (r.split) {
                    pts[k++] = (eagle_layout_point){r.anchor, r.row + 1 + r.join};
                    pts[k++] = (eagle_layout_point){n.x, r.row + 1 + r.join};
                }
            }
            pts[k++] = (eagle_layout_point){n.x, n.y};
            if (OUT_GROW(e, wires, n_wires, 1))
                return;
            int32_t first = e->out->n_points;
            eagle_layout_link wire = {x.node, n.node, -1, 1, first, add_corners(e, pts, k, first)};
            e->out->wires[e->out->n_wires++] = wire;
        }
    }
}

static void place(engine *e, int32_t i, int32_t x, int32_t y, ports *entries, ports *exits);

/* Place blocks idx[0..n) one under another on one anchor, wired in order; their tops into tops. */
static void place_seq(engine *e, const int32_t *idx, int32_t n, int32_t x, int32_t y,
                      ports *entries, ports *exits, int32_t *tops)
{
    int32_t anchor = 0;
    ports last = {0};
    for (int32_t k = 0; k < n; ++k)
        anchor = max32(anchor, measure(e, idx[k]).anchor);
    for (int32_t k = 0; k < n && !e->status; ++k) {
        size s = measure(e, idx[k]);
        ports ins = {0}, outs = {0};
        int32_t gap = k ? between(measure(e, idx[k - 1]), s) : 0;
        y += gap;
        place(e, idx[k], x + anchor - s.anchor, y, k ? &ins : entries, &outs);
        if (k) {
            route r = {0, x + anchor, y - gap, last.n > 1, ins.n > 1, 0, 0};
            connect(e, &last, &ins, r);
        }
        if (tops)
            tops[k] = y;
        free(ins.v);
        free(last.v);
        last = outs;
        y += s.h;
    }
    for (int32_t k = 0; k < last.n; ++k)
        push_port(e, exits, last.v[k]);
    free(last.v);
}

static void place(engine *e, int32_t i, int32_t x, int32_t y, ports *entries, ports *exits)
{
    const eagle_layout_block *b = &e->in->blocks[i];
    size s = measure(e, i);
    if (b->kind == EAGLE_LAYOUT_BOX) {
        if (OUT_GROW(e, boxes, n_boxes, 2))
            return;
        e->out->boxes[e->out->n_boxes++] = (eagle_layout_box){b->node, x, y, s.w};
        push_port(e, entries, (port){b->node, x + s.anchor, y, 0, 0});
        push_port(e, exits, (port){b->node, x + s.anchor, y + BOX_ROWS - 1, y + BOX_ROWS, s.w});
    } else if (b->kind == EAGLE_LAYOUT_FRAME) {
        size body = measure(e, i + 1);
        int32_t first = e->out->n_boxes, right = x + s.w - 1;
        ports outs = {0};
        place(e, i + 1, x + inset(s.w, body.w), y + 1, entries, &outs);
        if (OUT_GROW(e, frames, n_frames, 3)) {
            free(outs.v);
            return;
        }
        e->out->frames[e->out->n_frames++] = (eagle_layout_frame){
            i, x, y, s.w, s.h, first, e->out->n_boxes - first};
        /* the names go under the frame, within it and centred on their wire; a lone exit has its width */
        for (int32_t k = 0; k < outs.n; ++k) {
            port p = outs.v[k];
            int32_t room = min32(outs.n == 1 ? s.w : p.room, 2 * min32(p.x - x, right - p.x) + 1);
            push_port(e, exits, (port){p.node, p.x, p.y, y + s.h, room});
        }
        free(outs.v);
    } else if (b->kind == EAGLE_LAYOUT_FORK) {
        int32_t *kids = children(e, i);
        for (int32_t c = 0, bx = 0; kids && c < b->count; ++c) {
            place(e, kids[c], x + bx, y, entries, exits);
            bx += measure(e, kids[c]).w + GAP;
        }
        free(kids);
    } else {
        int32_t *kids = children(e, i);
        if (kids)
            place_seq(e, kids, b->count, x, y, entries, exits, NULL);
        free(kids);
    }
}

/* Stage indices s0.. cut into at most `columns` runs of about equal height: run k is
 * [cuts[k], cuts[k + 1]).  Returns the number of runs. */
static int32_t chunks(engine *e, int32_t columns, int32_t *cuts)
{
    int64_t total = 0, height = 0;
    int32_t n = e->in->n_stages, runs = 1;
    for (int32_t s = 0; s < n; ++s)
        total += measure(e, e->stage[s]).h + 2;
    columns = max32(1, columns);
    int64_t target = (total + columns - 1) / columns;
    cuts[0] = 0;
    for (int32_t s = 0; s < n; ++s) {
        int32_t h = measure(e, e->stage[s]).h;
        if (s > cuts[runs - 1] && height + h > target && runs < columns) {
            cuts[runs++] = s;
            height = 0;
        }
        height += h + 2;
    }
    cuts[runs] = n;
    return runs;
}

static void place_stages(engine *e)
{
    const eagle_layout_input *in = e->in;
    int32_t n = in->n_stages, label_w = 0, x = 0, top, bottom = 0;
    int32_t *cuts = malloc(((size_t)n + 1) * sizeof *cuts),
            *tops = malloc((size_t)n * sizeof *tops);
    ports prev = {0};
    int32_t prev_right = 0, first_h = 0;
    if (!cuts || !tops) {
        e->status = EAGLE_ERR_NOMEM;
        goto done;
    }
    for (int32_t s = 0; in->label_w && s < n; ++s)
        label_w = max32(label_w, in->label_w[s] + 1);
    int32_t runs = chunks(e, in->columns, cuts);
    top = runs > 1; /* a row above for the wires from one column to the next */
    for (int32_t k = 0; k < runs; ++k) {
        size s = seq_size(e, e->stage + cuts[k], cuts[k + 1] - cuts[k]);
        bottom = max32(bottom, top + s.h + 1);
        if (!k)
            first_h = s.h;
    }
    for (int32_t k = 0; k < runs && !e->status; ++k) {
        int32_t a = cuts[k], m = cuts[k + 1] - a;
        ports entries = {0}, exits = {0};
        place_seq(e, e->stage + a, m, x + label_w, top, &entries, &exits, tops + a);
        for (int32_t s = a; in->label_w && s < a + m && !e->status; ++s) {
            if (OUT_GROW(e, stages, n_stages, 4))
                break;
            int32_t row = tops[s] + measure(e, e->stage[s]).label_row;
            e->out->stages[e->out->n_stages++] = (eagle_layout_stage){s, x, row, label_w};
        }
        if (k) {
            route r = {1, 0, 0, 0, 0, prev_right + GUTTER / 2, bottom};
            connect(e, &prev, &entries, r);
        }
        free(prev.v);
        free(entries.v);
        prev = exits;
        prev_right = x + label_w + seq_size(e, e->stage + a, m).w;
        x = prev_right + GUTTER;
    }
    e->out->width = x - GUTTER;
    e->out->height = runs > 1 ? bottom + 1 : top + first_h;
done:
    free(prev.v);
    free(cuts);
    free(tops);
}

/* ------------------------------------------------------------- links */

/* An open-addressing set of (a, b) pairs of non-negative int32, each with a value. */
typedef struct pair_map {
    uint64_t *keys; /* (a << 32 | b) + 1; 0: empty */
    int32_t *values;
    size_t mask;
} pair_map;

static int map_init(pair_map *m, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n + 2)
        cap *= 2;
    m->keys = calloc(cap, sizeof *m->keys);
    m->values = malloc(cap * sizeof *m->values);
    m->mask = cap - 1;
    return m->keys && m->values ? 0 : -1;
}

static size_t map_slot(const pair_map *m, int32_t a, int32_t b)
{
    uint64_t key = ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) + 1;
    size_t h = (size_t)(key * 0x9E3779B97F4A7C15ull >> 17) & m->mask;
    while (m->keys[h] && m->keys[h] != key)
        h = (h + 1) & m->mask;
    return h;
}

/* The value of (a, b), or -1; with `put` >= 0, set it when absent. */
static int32_t map_get(pair_map *m, int32_t a, int32_t b, int32_t put)
{
    size_t h = map_slot(m, a, b);
    if (m->keys[h])
        return m->values[h];
    if (put >= 0) {
        m->keys[h] = ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) + 1;
        m->values[h] = put;
    }
    return -1;
}

static void map_free(pair_map *m)
{
    free(m->keys);
    free(m->values);
}

/* The links: each adjacent pair of wired boxes once, then a long link for every pair no wire
 * draws, from the source's last box to the destination's first: an owner's, or the box of a
 * node inside a construct (a wait or a plane between the nodes of a body). */
static void make_links(engine *e)
{
    const eagle_layout_input *in = e->in;
    eagle_layout *o = e->out;
    int32_t *first = malloc((size_t)in->n_nodes * sizeof *first);
    int32_t *last = malloc((size_t)in->n_nodes * sizeof *last);
    pair_map data = {0}, seen = {0}, wired = {0};
    if (!first || !last || map_init(&data, (size_t)in->n_pairs)
        || map_init(&seen, (size_t)o->n_wires) || map_init(&wired, (size_t)o->n_wires)) {
        e->status = EAGLE_ERR_NOMEM;
        goto done;
    }
    for (int32_t p = 0; p < in->n_pairs; ++p)
        map_get(&data, in->pairs[p].src, in->pairs[p].dst, p);
    for (int32_t k = 0; k < in->n_nodes; ++k)
        first[k] = last[k] = -1;
    for (int32_t k = 0; k < o->n_boxes; ++k) {
        int32_t node = o->boxes[k].node, owner = in->owners[node];
        last[owner] = node;
        if (first[owner] < 0)
            first[owner] = node;
        if (owner != node) /* a node inside a construct: a pair may name its own box */
            first[node] = last[node] = node;
    }
    for (int32_t w = 0; w < o->n_wires && !e->status; ++w) {
        int32_t s = o->wires[w].src, d = o->wires[w].dst;
        if (map_get(&seen, s, d, 1) >= 0)
            continue;
        map_get(&wired, in->owners[s], in->owners[d], 1);
        if (OUT_GROW(e, links, n_links, 5))
            break;
        /* the pair of the two boxes (a plane between two nodes of a body), else of their owners */
        int32_t pair = map_get(&data, s, d, -1);
        if (pair < 0)
            pair = map_get(&data, in->owners[s], in->owners[d], -1);
        o->links[o->n_links++] = (eagle_layout_link){
            s, d, pair, 1, o->wires[w].first, o->wires[w].n};
    }
    for (int32_t p = 0; p < in->n_pairs && !e->status; ++p) {
        int32_t s = in->pairs[p].src, d = in->pairs[p].dst;
        if (s < 0 || s >= in->n_nodes || d < 0 || d >= in->n_nodes) {
            e->status = eagle_fail(EAGLE_ERR_ARG, "eagle_layout_run: pair %d is out of range", p);
            break;
        }
        if (last[s] < 0 || first[d] < 0) /* a node that draws no box (a wait) */
            continue;
        /* between owners, a wire joining them draws the pair; inside one, a wire between its boxes */
        int32_t os = in->owners[s], od = in->owners[d];
        if (os != od ? map_get(&wired, os, od, -1) >= 0
                     : map_get(&seen, last[s], first[d], -1) >= 0)
            continue;
        if (OUT_GROW(e, links, n_links, 5))
            break;
        o->links[o->n_links++] = (eagle_layout_link){last[s], first[d], p, 0, 0, 0};
    }
done:
    free(first);
    free(last);
    map_free(&data);
    map_free(&seen);
    map_free(&wired);
}

/* ----------------------------------------------------------- routing */

enum {
    NO_H = 1,   /* no horizontal run through the cell: a horizontal line or text is there */
    NO_V = 2,   /* no vertical run */
    LINE = 4,   /* a line to cross (costs CROSS) */
    LONG_H = 8, /* NO_H, NO_V for a long link's cells: the fallback may run along those */
    LONG_V = 16,
    LONG = 3,   /* the shift from NO_H, NO_V to LONG_H, LONG_V */
    PORT = 32,  /* beside a box's middle: where its links leave and end, no other link passes */
    NAMES = 64, /* a row of plane names, as wide as its room: the names are often shorter */
};

enum {
    RIGHT,
    LEFT,
    DOWN,
    UP
};
static const int32_t DX[4] = {1, -1, 0, 0}, DY[4] = {0, 0, 1, -1};

typedef struct grid {
    int32_t w, h;
    uint8_t *cell;
} grid;

static void mark(grid *g, int32_t x, int32_t y, uint8_t flags)
{
    if (x >= 0 && y >= 0 && x < g->w && y < g->h)
        g->cell[(size_t)y * g->w + x] |= flags;
}

/* A path's cells: NO_H along its horizontal runs, NO_V along its vertical ones, both at corners
 * (shifted by `shift`: LONG for a long link). */
static void mark_path(grid *g, const eagle_layout_point *p, int32_t n, int shift)
{
    for (int32_t k = 0; k + 1 < n; ++k) {
        int32_t dx = (p[k + 1].x > p[k].x) - (p[k + 1].x < p[k].x);
        int32_t dy = (p[k + 1].y > p[k].y) - (p[k + 1].y < p[k].y);
        uint8_t along = (uint8_t)((dx ? NO_H : NO_V) << shift);
        for (int32_t x = p[k].x, y = p[k].y;; x += dx, y += dy) {
            mark(g, x, y, along | LINE);
            if (x == p[k + 1].x && y == p[k + 1].y)
                break;
        }
    }
    for (int32_t k = 1; k + 1 < n; ++k) /* a corner is met from both axes */
        mark(g, p[k].x, p[k].y, (uint8_t)((NO_H | NO_V) << shift));
}

/* The obstacles: boxes and text solid, wires and frame borders lines to cross, not run along. */
static void fill_grid(engine *e, grid *g)
{
    eagle_layout *o = e->out;
    for (int32_t k = 0; k < o->n_boxes; ++k) {
        eagle_layout_box b = o->boxes[k];
        for (int32_t y = b.y; y < b.y + BOX_ROWS; ++y)
            for (int32_t x = b.x; x < b.x + b.w; ++x)
                mark(g, x, y, NO_H | NO_V);
        mark(g, b.x - 1, b.y + 1, PORT);
        mark(g, b.x + b.w, b.y + 1, PORT);
    }
    for (int32_t k = 0; k < o->n_frames; ++k) {
        eagle_layout_frame f = o->frames[k];
        for (int32_t x = f.x; x < f.x + f.w; ++x) {
            mark(g, x, f.y, NO_H | LINE);
            mark(g, x, f.y + f.h - 1, NO_H | LINE);
        }
        for (int32_t y = f.y; y < f.y + f.h; ++y) {
            mark(g, f.x, y, NO_V | LINE);
            mark(g, f.x + f.w - 1, y, NO_V | LINE);
        }
        /* the title, " title " centred on the top border, is text */
        int32_t title = e->in->blocks[f.block].width + 2, fill = f.w - 2 - title;
        for (int32_t x = f.x + 1 + fill / 2; x < f.x + 1 + fill / 2 + title; ++x)
            mark(g, x, f.y, NO_V);
    }
    for (int32_t k = 0; k < o->n_exits; ++k) { /* the plane names, at most their room */
        eagle_layout_exit x = o->exits[k];
        for (int32_t c = x.x - x.room / 2; c <= x.x + x.room / 2; ++c)
            mark(g, c, x.y, NO_H | NAMES);
    }
    for (int32_t k = 0; k < o->n_stages; ++k) {
        eagle_layout_stage s = o->stages[k];
        for (int32_t c = s.x; c < s.x + s.w; ++c)
            mark(g, c, s.y, NO_H | NO_V);
    }
    for (int32_t w = 0; w < o->n_wires; ++w)
        mark_path(g, o->points + o->wires[w].first, o->wires[w].n, 0);
}

/* A binary min-heap of (cost << 32 | state). */
typedef struct heap {
    uint64_t *v;
    int32_t n, cap;
} heap;

static int heap_push(heap *h, uint64_t item)
{
    if (GROW(h->v, h->n, h->cap))
        return -1;
    int32_t k = h->n++;
    while (k > 0 && h->v[(k - 1) / 2] > item) {
        h->v[k] = h->v[(k - 1) / 2];
        k = (k - 1) / 2;
    }
    h->v[k] = item;
    return 0;
}

static uint64_t heap_pop(heap *h)
{
    uint64_t top = h->v[0], item = h->v[--h->n];
    int32_t k = 0;
    for (;;) {
        int32_t c = 2 * k + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->v[c + 1] < h->v[c])
            ++c;
        if (h->v[c] >= item)
            break;
        h->v[k] = h->v[c];
        k = c;
    }
    if (h->n)
        h->v[k] = item;
    return top;
}

typedef struct search {
    grid *g;
    int32_t y0, rows, inner_w; /* the band of rows searched; columns of the drawing */
    int share; /* the fallback: a route may run along the long links before it, at OVER a cell */
    int names; /* the last: it may also cross a row of plane names, at OVER */
    uint32_t *cost; /* state -> best cost; a state is ((y - y0) * w + x) * 4 + dir */
    int32_t *from;  /* state -> the state before it */
} search;

/* Dijkstra from the two sides of box s to a side of box d; the path into pts (cells beside the
 * boxes, src side first).  The number of cells, 0 when none is found. */
static int32_t maze(search *r, heap *h, eagle_layout_box s, eagle_layout_box d,
                    eagle_layout_point *pts, int32_t max_pts)
{
    grid *g = r->g;
    size_t states = (size_t)r->rows * g->w * 4;
    int32_t mid_s = s.y + 1, mid_d = d.y + 1, goal = -1;
    memset(r->cost, 0xff, states * sizeof *r->cost);
    h->n = 0;
    int32_t starts[2][2] = {{s.x + s.w, RIGHT}, {s.x - 1, LEFT}};
    for (int k = 0; k < 2; ++k) {
        int32_t x = starts[k][0];
        if (x < 0 || x >= g->w || mid_s < r->y0 || mid_s >= r->y0 + r->rows)
            continue;
        int32_t st = (int32_t)((((size_t)(mid_s - r->y0) * g->w) + x) * 4 + starts[k][1]);
        if (g->cell[(size_t)mid_s * g->w + x] & (r->share ? NO_H : NO_H | LONG_H))
            continue;
        r->cost[st] = 0;
        r->from[st] = -1;
        if (heap_push(h, (uint64_t)st))
            return -1;
    }
    while (h->n) {
        uint64_t item = heap_pop(h);
        uint32_t c = (uint32_t)(item >> 32);
        int32_t st = (int32_t)(item & 0xffffffffu), dir = st % 4, cellno = st / 4;
        int32_t x = cellno % g->w, y = cellno / g->w + r->y0;
        if (c != r->cost[st])
            continue;
        if (y == mid_d && ((x == d.x - 1 && dir == RIGHT) || (x == d.x + d.w && dir == LEFT))) {
            goal = st;
            break;
        }
        for (int32_t nd = 0; nd < 4; ++nd) {
            if ((dir ^ nd) == 1 && nd / 2 == dir / 2) /* no turning back */
                continue;
            int32_t nx = x + DX[nd], ny = y + DY[nd];
            if (nx < 0 || nx >= g->w || ny < r->y0 || ny >= r->y0 + r->rows)
                continue;
            uint8_t f = g->cell[(size_t)ny * g->w + nx], here = g->cell[(size_t)y * g->w + x];
            uint8_t along = nd < 2 ? NO_H : NO_V, both = NO_H | NO_V | NAMES;
            /* a bend only where both axes are free; never along a wire or border, nor over text */
            int names = nd >= 2 && (f & NAMES);
            int blocked = (f & along) || (nd != dir && (here & both)) || (names && !r->names);
            int shared = (f & along << LONG) || (nd != dir && (here & both << LONG));
            /* a port but the destination's, entered towards it: a link passing a port would
             * seem to end at that box */
            int port = (f & PORT)
                && !(ny == mid_d
                     && ((nx == d.x - 1 && nd == RIGHT) || (nx == d.x + d.w && nd == LEFT)));
            if (blocked || port || (shared && !r->share))
                continue;
            uint32_t step = (nd >= 2 && nx < r->inner_w) ? 2 : 1;
            step += (nd != dir ? BEND : 0) + ((f & LINE) ? CROSS : 0)
                + (shared || names ? OVER : 0);
            int32_t ns = (int32_t)((((size_t)(ny - r->y0) * g->w) + nx) * 4 + nd);
            if (c + step < r->cost[ns]) {
                r->cost[ns] = c + step;
                r->from[ns] = st;
                if (heap_push(h, ((uint64_t)(c + step) << 32) | (uint32_t)ns))
                    return -1;
            }
        }
    }
    if (goal < 0)
        return 0;
    int32_t n = 0;
    for (int32_t st = goal; st >= 0 && n < max_pts; st = r->from[st]) {
        int32_t cellno = st / 4;
        pts[n++] = (eagle_layout_point){cellno % g->w, cellno / g->w + r->y0};
    }
    for (int32_t a = 0, b = n - 1; a < b; ++a, --b) {
        eagle_layout_point t = pts[a];
        pts[a] = pts[b];
        pts[b] = t;
    }
    return n;
}

static const eagle_layout_box *box_of(const eagle_layout *o, const int32_t *where, int32_t node)
{
    return &o->boxes[where[node]];
}

static int by_span(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]) ? (x[0] > y[0]) - (x[0] < y[0])
                                         : (x[1] > y[1]) - (x[1] < y[1]);
}

static int by_span_scalar(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The most long links whose rows overlap at one row: each may need a lane of its own, two columns
 * apart.  spans holds 2 * n (top, bottom) pairs and is sorted in place. */
static int32_t most_overlapping(int64_t *spans, int32_t n)
{
    int64_t *events = spans; /* a top as 2*row, a bottom as 2*row+1: a top opens before a bottom */
    int32_t open = 0, most = 0;
    for (int32_t k = 0; k < 2 * n; ++k)
        events[k] = 2 * events[k] + (k & 1);
    qsort(events, (size_t)2 * n, sizeof *events, by_span_scalar);
    for (int32_t k = 0; k < 2 * n; ++k) {
        open += (events[k] & 1) ? -1 : 1;
        most = max32(most, open);
    }
    return most;
}

/* The grid, w by h cells, filled with the drawing's obstacles and the long links routed so far
 * (those with points); nonzero when out of memory. */
static int regrid(engine *e, grid *g, int32_t w, int32_t h)
{
    free(g->cell);
    g->w = w;
    g->h = h;
    g->cell = calloc((size_t)w * h, 1);
    if (!g->cell)
        return e->status = EAGLE_ERR_NOMEM;
    fill_grid(e, g);
    for (int32_t k = 0; k < e->out->n_links; ++k) {
        const eagle_layout_link *link = &e->out->links[k];
        if (!link->adjacent && link->n)
            mark_path(g, e->out->points + link->first, link->n, LONG);
    }
    return 0;
}

/* Route every long link, shortest span first; widens the layout by the lanes used. */
static void route_links(engine *e)
{
    eagle_layout *o = e->out;
    int32_t n_long = 0, inner_w = o->width;
    for (int32_t k = 0; k < o->n_links; ++k)
        n_long += !o->links[k].adjacent;
    if (!n_long)
        return;
    int32_t *where = malloc((size_t)e->in->n_nodes * sizeof *where);
    int64_t *order = malloc((size_t)n_long * 2 * sizeof *order);
    int64_t *spans = malloc((size_t)n_long * 2 * sizeof *spans);
    if (!where || !order || !spans) {
        free(where);
        free(order);
        free(spans);
        e->status = EAGLE_ERR_NOMEM;
        return;
    }
    for (int32_t k = 0; k < o->n_boxes; ++k)
        where[o->boxes[k].node] = k;
    for (int32_t k = 0, m = 0; k < o->n_links; ++k) {
        if (o->links[k].adjacent)
            continue;
        const eagle_layout_box *s = box_of(o, where, o->links[k].src);
        const eagle_layout_box *d = box_of(o, where, o->links[k].dst);
        order[2 * m] = abs32(d->y - s->y);
        order[2 * m + 1] = k;
        spans[2 * m] = min32(s->y, d->y);
        spans[2 * m++ + 1] = max32(s->y, d->y) + BOX_ROWS;
    }
    int32_t lanes = most_overlapping(spans, n_long);
    free(spans);
    grid g = {inner_w + 2 * lanes + 2, o->height + 2, NULL}; /* two rows below, to go round */
    eagle_layout_point *pts = NULL;
    search r = {&g, 0, 0, inner_w, 0, 0, NULL, NULL};
    heap h = {0};
    if (regrid(e, &g, g.w, g.h))
        goto done;
    qsort(order, (size_t)n_long, 2 * sizeof *order, by_span);
    int32_t used = inner_w, rows = o->height;
    for (int32_t m = 0; m < n_long && !e->status; ++m) {
        eagle_layout_link *link = &o->links[order[2 * m + 1]];
        eagle_layout_box s = *box_of(o, where, link->src), d = *box_of(o, where, link->dst);
        /* the band of rows between the ends, one box's height more either side, then all, then
         * all sharing the long links before it (a box's sides may have none free), then also
         * across rows of plane names (marked as wide as their room, they seal the gaps between
         * branches under a frame), then so on a grid one lane wider and one row taller each
         * time: a link is never left out */
        int32_t found = 0;
        for (int32_t pass = 0; pass < 4 + n_long && !found && !e->status; ++pass) {
            if (pass >= 4 && regrid(e, &g, g.w + 2, g.h + 1))
                break;
            int32_t lo = pass ? 0 : max32(0, min32(s.y, d.y) - BOX_ROWS);
            int32_t hi = pass ? g.h : min32(g.h, max32(s.y, d.y) + 2 * BOX_ROWS);
            size_t states = (size_t)(hi - lo) * g.w * 4;
            uint32_t *cost = realloc(r.cost, states * sizeof *cost);
            if (cost)
                r.cost = cost;
            int32_t *from = realloc(r.from, states * sizeof *from);
            if (from)
                r.from = from;
            eagle_layout_point *p = realloc(pts, (size_t)(hi - lo) * g.w * sizeof *p);
            if (p)
                pts = p;
            if (!cost || !from || !p) {
                e->status = EAGLE_ERR_NOMEM;
                break;
            }
            r.y0 = lo;
            r.rows = hi - lo;
            r.share = pass >= 2;
            r.names = pass >= 3;
            found = maze(&r, &h, s, d, pts, (hi - lo) * g.w);
            if (found < 0)
                e->status = EAGLE_ERR_NOMEM;
        }
        if (!found && !e->status)
            e->status = eagle_fail(EAGLE_ERR_ARG,
                                   "eagle_layout_run: no route for the link from node %d to node "
                                   "%d crosses only lines, even %d lanes wider (the sides of its "
                                   "boxes are walled in); this is a bug of libeagle's layout: "
                                   "report it with the graph that gives it",
                                   link->src, link->dst, n_long);
        if (found <= 0)
            break;
        link->first = o->n_points;
        link->n = add_corners(e, pts, found, link->first);
        mark_path(&g, o->points + link->first, link->n, LONG);
        for (int32_t q = 0; q < found; ++q) {
            used = max32(used, pts[q].x + 1);
            rows = max32(rows, pts[q].y + 1);
        }
    }
    o->width = used;
    o->height = rows;
done:
    free(where);
    free(order);
    free(pts);
    free(g.cell);
    free(r.cost);
    free(r.from);
    free(h.v);
}

/* ----------------------------------------------------------- the API */

EAGLE_API void eagle_layout_free(eagle_layout *lay)
{
    if (!lay)
        return;
    free(lay->boxes);
    free(lay->frames);
    free(lay->exits);
    free(lay->stages);
    free(lay->wires);
    free(lay->links);
    free(lay->points);
    free(lay);
}

static int check_input(const eagle_layout_input *in, int32_t *end, int32_t *stage)
{
    int32_t i = 0;
    for (int32_t s = 0; s < in->n_stages; ++s) {
        if (i >= in->n_blocks || (stage[s] = i, i = subtree_end(in, end, i)) < 0)
            return eagle_fail(EAGLE_ERR_ARG, "eagle_layout_run: stage %d is not one tree", s);
    }
    if (i != in->n_blocks)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_layout_run: blocks past the last stage");
    for (int32_t k = 0; k < in->n_nodes; ++k) {
        if (in->owners[k] < 0 || in->owners[k] >= in->n_nodes)
            return eagle_fail(EAGLE_ERR_ARG, "eagle_layout_run: owner of node %d out of range", k);
    }
    return EAGLE_OK;
}

EAGLE_API int eagle_layout_run(const eagle_layout_input *in, eagle_layout **out)
{
    if (!out)
        return eagle_fail(EAGLE_ERR_ARG, "eagle_layout_run: out is NULL");
    *out = NULL;
    if (!in || in->n_blocks < 0 || in->n_stages < 0 || in->n_nodes < 0 || in->n_pairs < 0
        || (in->n_blocks && !in->blocks) || (in->n_nodes && !in->owners)
        || (in->n_pairs && !in->pairs))
        return eagle_fail(EAGLE_ERR_ARG, "eagle_layout_run: a bad input");
    engine e = {in, calloc(1, sizeof(eagle_layout)), NULL, NULL, NULL, NULL, NULL, {0}, EAGLE_OK};
    size_t nb = (size_t)in->n_blocks + 1;
    e.end = malloc(nb * sizeof *e.end);
    e.stage = malloc(((size_t)in->n_stages + 1) * sizeof *e.stage);
    e.box_w = calloc((size_t)in->n_nodes + 1, sizeof *e.box_w);
    e.sizes = malloc(nb * sizeof *e.sizes);
    e.sized = calloc(nb, 1);
    *out = e.out;
    if (!e.out || !e.end || !e.stage || !e.box_w || !e.sizes || !e.sized)
        e.status = EAGLE_ERR_NOMEM;
    else
        e.status = check_input(in, e.end, e.stage);
    if (!e.status && in->n_stages)
        place_stages(&e);
    for (int32_t k = 0; k < e.exits.n && !e.status; ++k) {
        port p = e.exits.v[k];
        if (OUT_GROW(&e, exits, n_exits, 6))
            break;
        e.out->exits[e.out->n_exits++] = (eagle_layout_exit){p.node, p.x, p.below, p.room};
    }
    if (!e.status)
        make_links(&e);
    if (!e.status)
        route_links(&e);
    free(e.end);
    free(e.stage);
    free(e.box_w);
    free(e.sizes);
    free(e.sized);
    free(e.exits.v);
    return e.status == EAGLE_ERR_NOMEM
        ? eagle_fail(EAGLE_ERR_NOMEM, "eagle_layout_run: out of memory")
        : e.status;
}

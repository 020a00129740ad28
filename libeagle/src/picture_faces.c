/*
 * picture_faces.c -- the Mermaid and DOT faces of a graph's picture, and the
 * palette every drawn face shares.
 *
 * Both walk the picture tree (the layout's input: boxes in order, a frame
 * opened before its body and closed after) and list the layout's links;
 * DOT also holds each row of the layout's boxes as one rank, in the layout's
 * order, so Graphviz draws the stages and branches as every face does.  The
 * texts are the caller's (eagle_picture_texts), the same the text face draws,
 * so a C++ graph and a Python one of the same shape give the same documents.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The palette, by EAGLE_STYLE_*: a role's fill, then its border, the frames', the wires', the
 * labels', the long links' colours, the font. */
static const char *const STYLE[EAGLE_STYLE_COUNT] = {
    "#e3eefa", "#e5f4ea", "#f2f2f2", "#fff3d6", /* fills: kernel, python, opaque, builtin */
    "#2f5f8f", "#2e7d4f", "#505050", "#9a741c", /* borders */
    "#fff7ef", "#c0662a", "#3c3c3c", "#5a5a5a", "#7b5ea7", "DejaVu Sans",
};
static const char *const ROLE_NAME[EAGLE_ROLE_COUNT] = {"kernel", "python", "opaque", "builtin"};

EAGLE_API const char *eagle_picture_style(int32_t which)
{
    return which >= 0 && which < EAGLE_STYLE_COUNT ? STYLE[which] : NULL;
}

typedef struct text {
    char *s;
    size_t n, cap;
    int status;
    const char *api; /* the entry point drawing it, for its error */
} text;

static void addf(text *t, const char *fmt, ...)
{
    if (t->status)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(t->s ? t->s + t->n : NULL, t->s ? t->cap - t->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            t->status = eagle_fail(EAGLE_ERR_ARG, "%s: a text cannot be formatted", t->api);
            return;
        }
        if (t->s && (size_t)k < t->cap - t->n) {
            t->n += (size_t)k;
            return;
        }
        size_t cap = (t->cap ? t->cap * 2 : 4096) + (size_t)k;
        char *grown = realloc(t->s, cap);
        if (!grown) {
            t->status = EAGLE_ERR_NOMEM;
            return;
        }
        t->s = grown;
        t->cap = cap;
    }
}

static void pad(text *t, int depth)
{
    for (int i = 0; i < depth; ++i)
        addf(t, "  ");
}

/* `s` as Mermaid reads it inside a quoted label: its syntax characters as entity codes. */
static void mermaid_quoted(text *t, const char *s)
{
    for (; *s; ++s) {
        const char *entity = *s == '"' ? "#quot;"
            : *s == '<'                ? "#lt;"
            : *s == '>'                ? "#gt;"
            : *s == '#'                ? "#35;"
            : *s == '|'                ? "#124;"
            : *s == '`'                ? "#96;"
                                       : NULL;
        if (entity)
            addf(t, "%s", entity);
        else
            addf(t, "%c", *s);
    }
}

/* `s` as a DOT string, quotes included. */
static void dot_quoted(text *t, const char *s)
{
    addf(t, "\"");
    for (; *s; ++s)
        addf(t, *s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
    addf(t, "\"");
}

typedef struct face {
    const eagle_layout_input *in;
    const eagle_layout *lay;
    const eagle_picture_texts *t;
    int32_t *frame_of; /* block -> its frame row of the layout, -1 */
    int dot;           /* DOT, else Mermaid */
    int32_t frames;    /* frames opened so far */
    text out;
} face;

static int32_t role_of(const face *f, int32_t node)
{
    return f->t->roles ? f->t->roles[node] : EAGLE_ROLE_KERNEL;
}

static void box_line(face *f, int32_t node, int depth)
{
    int32_t role = role_of(f, node);
    pad(&f->out, depth);
    if (!f->dot) {
        addf(&f->out, "n%d[\"", node);
        mermaid_quoted(&f->out, f->t->nodes[node]);
        addf(&f->out, "\"]:::%s\n", ROLE_NAME[role]);
        return;
    }
    addf(&f->out, "n%d [label=", node);
    dot_quoted(&f->out, f->t->nodes[node]);
    addf(&f->out, ", fillcolor=\"%s\", color=\"%s\"%s];\n", STYLE[EAGLE_STYLE_FILL + role],
         STYLE[EAGLE_STYLE_BORDER + role],
         role == EAGLE_ROLE_OPAQUE ? ", style=\"rounded,filled,dashed\"" : "");
}

static void open_line(face *f, const char *title, int depth)
{
    pad(&f->out, depth);
    if (!f->dot) {
        addf(&f->out, "subgraph f%d[\"", f->frames);
        mermaid_quoted(&f->out, title);
        addf(&f->out, "\"]\n");
    } else {
        addf(&f->out, "subgraph cluster_f%d {\n", f->frames);
        pad(&f->out, depth);
        addf(&f->out, "  label=");
        dot_quoted(&f->out, title);
        addf(&f->out,
             "; style=\"rounded,dashed,filled\"; color=\"%s\"; fillcolor=\"%s\"; "
             "fontcolor=\"%s\";\n",
             STYLE[EAGLE_STYLE_FRAME], STYLE[EAGLE_STYLE_FRAME_FILL], STYLE[EAGLE_STYLE_FRAME]);
    }
    ++f->frames;
}

/* The lines of block b and its subtree at `depth`; the index past it, or -1 for a malformed
 * tree (a count past the end, a node out of range, a frame the layout has no row for). */
static int32_t walk(face *f, int32_t b, int depth)
{
    if (b < 0 || b >= f->in->n_blocks)
        return -1;
    eagle_layout_block k = f->in->blocks[b];
    if (k.kind == EAGLE_LAYOUT_BOX) {
        if (k.node < 0 || k.node >= f->t->n_nodes)
            return -1;
        box_line(f, k.node, depth);
        return b + 1;
    }
    if (k.kind < EAGLE_LAYOUT_BOX || k.kind > EAGLE_LAYOUT_FRAME || k.count < 1)
        return -1;
    if (k.kind == EAGLE_LAYOUT_FRAME) {
        if (f->frame_of[b] < 0)
            return -1;
        open_line(f, f->t->frames[f->frame_of[b]], depth);
    }
    int inner = depth + (k.kind == EAGLE_LAYOUT_FRAME);
    int32_t next = b + 1;
    for (int32_t c = 0; c < k.count && next >= 0; ++c)
        next = walk(f, next, inner);
    if (k.kind == EAGLE_LAYOUT_FRAME && next >= 0) {
        pad(&f->out, depth);
        addf(&f->out, f->dot ? "}\n" : "end\n");
    }
    return next;
}

static void link_lines(face *f)
{
    for (int32_t k = 0; k < f->lay->n_links; ++k) {
        const eagle_layout_link *l = &f->lay->links[k];
        const char *label = l->pair >= 0 ? f->t->pairs[l->pair] : "";
        if (!f->dot) {
            addf(&f->out, "  n%d ", l->src);
            if (*label) {
                addf(&f->out, "-->|\"");
                mermaid_quoted(&f->out, label);
                addf(&f->out, "\"|");
            } else {
                addf(&f->out, "-.->");
            }
            addf(&f->out, " n%d\n", l->dst);
        } else {
            addf(&f->out, "  n%d -> n%d [", l->src, l->dst);
            if (*label) {
                addf(&f->out, "label=");
                dot_quoted(&f->out, label);
            } else {
                addf(&f->out, "style=dashed");
            }
            addf(&f->out, "];\n");
        }
    }
}

typedef struct row_box {
    int32_t row, x, k;
} row_box;

static int by_row(const void *a, const void *b)
{
    const row_box *p = a, *q = b;
    return p->row != q->row ? (p->row > q->row) - (p->row < q->row)
        : p->x != q->x      ? (p->x > q->x) - (p->x < q->x)
                            : (p->k > q->k) - (p->k < q->k);
}

/* Each row of the layout's boxes as one rank, held left to right by invisible edges; a frame
 * sets its boxes one row lower, so a box's row is counted without the frames around it. */
static int dot_ranks(face *f)
{
    const eagle_layout *lay = f->lay;
    row_box *rows = calloc((size_t)lay->n_boxes + 1, sizeof *rows);
    if (!rows)
        return EAGLE_ERR_NOMEM;
    for (int32_t k = 0; k < lay->n_boxes; ++k)
        rows[k] = (row_box){lay->boxes[k].y, lay->boxes[k].x, k};
    for (int32_t r = 0; r < lay->n_frames; ++r) {
        const eagle_layout_frame *fr = &lay->frames[r];
        if (fr->first_box < 0 || fr->n_boxes < 0 || fr->first_box > lay->n_boxes - fr->n_boxes) {
            free(rows);
            return eagle_fail(EAGLE_ERR_ARG,
                              "eagle_picture_dot: frame %d's boxes are past the "
                              "layout's",
                              r);
        }
        for (int32_t k = fr->first_box; k < fr->first_box + fr->n_boxes; ++k)
            --rows[k].row;
    }
    qsort(rows, (size_t)lay->n_boxes, sizeof *rows, by_row);
    addf(&f->out, "  // the layout's rows: one rank each, in the layout's order\n");
    for (int32_t i = 0; i < lay->n_boxes;) {
        int32_t j = i;
        addf(&f->out, "  { rank=same;");
        for (; j < lay->n_boxes && rows[j].row == rows[i].row; ++j)
            addf(&f->out, " n%d;", lay->boxes[rows[j].k].node);
        addf(&f->out, " }\n");
        for (int32_t k = i; k + 1 < j; ++k)
            addf(&f->out, "  n%d -> n%d [style=invis];\n", lay->boxes[rows[k].k].node,
                 lay->boxes[rows[k + 1].k].node);
        i = j;
    }
    free(rows);
    return EAGLE_OK;
}

static int check_faces(const eagle_layout_input *in, const eagle_layout *lay,
                       const eagle_picture_texts *t, const char *api)
{
    if (!in || !lay || !t || !t->header || (in->n_blocks && !in->blocks) || in->n_blocks < 0)
        return eagle_fail(EAGLE_ERR_ARG, "%s: a NULL input, layout, texts or header", api);
    if (t->n_nodes < 0 || (t->n_nodes && !t->nodes) || t->n_frames != lay->n_frames
        || (t->n_frames && !t->frames) || t->n_stages != in->n_stages || (t->n_stages && !t->notes)
        || t->n_pairs != in->n_pairs || (t->n_pairs && !t->pairs) || lay->n_boxes < 0
        || lay->n_frames < 0 || lay->n_links < 0 || (lay->n_boxes && !lay->boxes)
        || (lay->n_frames && !lay->frames) || (lay->n_links && !lay->links))
        return eagle_fail(EAGLE_ERR_ARG,
                          "%s: texts that do not fit the layout (%d frame titles for %d frames, "
                          "%d stage notes for %d stages, %d pair labels for %d pairs), or a NULL "
                          "array for a count above 0",
                          api, t->n_frames, lay->n_frames, t->n_stages, in->n_stages, t->n_pairs,
                          in->n_pairs);
    for (int32_t k = 0; k < t->n_nodes; ++k)
        if (!t->nodes[k] || (t->roles && (t->roles[k] < 0 || t->roles[k] >= EAGLE_ROLE_COUNT)))
            return eagle_fail(EAGLE_ERR_ARG, "%s: node %d has no text or an unknown role", api, k);
    for (int32_t k = 0; k < t->n_frames; ++k)
        if (!t->frames[k])
            return eagle_fail(EAGLE_ERR_ARG, "%s: frame title %d is NULL", api, k);
    for (int32_t k = 0; k < t->n_stages; ++k)
        if (!t->notes[k])
            return eagle_fail(EAGLE_ERR_ARG, "%s: stage note %d is NULL", api, k);
    for (int32_t k = 0; k < t->n_pairs; ++k)
        if (!t->pairs[k])
            return eagle_fail(EAGLE_ERR_ARG, "%s: pair label %d is NULL", api, k);
    for (int32_t k = 0; k < lay->n_links; ++k)
        if (lay->links[k].pair >= t->n_pairs || lay->links[k].src < 0
            || lay->links[k].src >= t->n_nodes || lay->links[k].dst < 0
            || lay->links[k].dst >= t->n_nodes)
            return eagle_fail(EAGLE_ERR_ARG, "%s: link %d is past the pairs or nodes", api, k);
    return EAGLE_OK;
}

static int draw_face(const eagle_layout_input *in, const eagle_layout *lay,
                     const eagle_picture_texts *t, char **out, int dot)
{
    const char *api = dot ? "eagle_picture_dot" : "eagle_picture_mermaid";
    if (!out)
        return eagle_fail(EAGLE_ERR_ARG, "%s: out is NULL", api);
    *out = NULL;
    int status = check_faces(in, lay, t, api);
    if (status)
        return status;
    face f = {.in = in,
              .lay = lay,
              .t = t,
              .frame_of = malloc(((size_t)in->n_blocks + 1) * sizeof(int32_t)),
              .dot = dot,
              .out = {.api = api}};
    if (!f.frame_of)
        return eagle_fail(EAGLE_ERR_NOMEM, "%s: out of memory", api);
    for (int32_t b = 0; b < in->n_blocks; ++b)
        f.frame_of[b] = -1;
    for (int32_t r = 0; r < lay->n_frames && !status; ++r) {
        int32_t b = lay->frames[r].block;
        if (b < 0 || b >= in->n_blocks)
            status = eagle_fail(EAGLE_ERR_ARG, "%s: frame %d is of block %d, past the input's", api,
                                r, b);
        else
            f.frame_of[b] = r;
    }
    if (!status && dot) {
        addf(&f.out, "digraph eagle {\n  graph [label=");
        dot_quoted(&f.out, t->header);
        addf(&f.out,
             ", labelloc=t, fontname=\"%s\", fontsize=12];\n"
             "  node [shape=box, style=\"rounded,filled\", fontname=\"%s\", fontsize=11];\n"
             "  edge [fontname=\"%s\", fontsize=10, color=\"%s\"];\n"
             "  newrank=true;  // ranks across clusters: a row of boxes is one rank even inside "
             "frames\n  remincross=false;\n",
             STYLE[EAGLE_STYLE_FONT], STYLE[EAGLE_STYLE_FONT], STYLE[EAGLE_STYLE_FONT],
             STYLE[EAGLE_STYLE_WIRE]);
    } else if (!status) {
        addf(&f.out, "flowchart TD\n  %%%% %s\n", t->header);
    }
    int32_t b = 0;
    for (int32_t s = 0; s < in->n_stages && !status; ++s) {
        addf(&f.out, dot ? "  // %s\n" : "  %%%% %s\n", t->notes[s]);
        if ((b = walk(&f, b, 1)) < 0)
            status = eagle_fail(EAGLE_ERR_ARG, "%s: stage %d is not one tree of the layout's", api,
                                s);
    }
    if (!status && b != in->n_blocks)
        status = eagle_fail(EAGLE_ERR_ARG, "%s: blocks past the last stage", api);
    if (!status) {
        link_lines(&f);
        if (dot) {
            status = dot_ranks(&f);
            addf(&f.out, "}\n");
        } else {
            for (int32_t r = 0; r < EAGLE_ROLE_COUNT; ++r)
                addf(&f.out, "  classDef %s fill:%s,stroke:%s%s\n", ROLE_NAME[r],
                     STYLE[EAGLE_STYLE_FILL + r], STYLE[EAGLE_STYLE_BORDER + r],
                     r == EAGLE_ROLE_OPAQUE ? ",stroke-dasharray:5 4" : "");
            for (int32_t k = 0; k < f.frames; ++k)
                addf(&f.out, "  style f%d fill:%s,stroke:%s,stroke-dasharray:6 4\n", k,
                     STYLE[EAGLE_STYLE_FRAME_FILL], STYLE[EAGLE_STYLE_FRAME]);
        }
    }
    status = status ? status : f.out.status;
    free(f.frame_of);
    if (status) {
        free(f.out.s);
        return status == EAGLE_ERR_NOMEM ? eagle_fail(EAGLE_ERR_NOMEM, "%s: out of memory", api)
                                         : status;
    }
    *out = f.out.s;
    return EAGLE_OK;
}

EAGLE_API int eagle_picture_mermaid(const eagle_layout_input *in, const eagle_layout *lay,
                                    const eagle_picture_texts *texts, char **out)
{
    return draw_face(in, lay, texts, out, 0);
}

EAGLE_API int eagle_picture_dot(const eagle_layout_input *in, const eagle_layout *lay,
                                const eagle_picture_texts *texts, char **out)
{
    return draw_face(in, lay, texts, out, 1);
}

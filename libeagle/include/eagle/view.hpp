/**
 * @file view.hpp
 * @brief eagle::GraphView: a C++-built host program and its picture, the one print(g) draws.
 *
 * A GraphView builds an eagle::exec::Program (its stage, branch, kernel,
 * reduce, ifThen, ifThenElse and loop forward to the program's) and keeps
 * what a picture needs that libeagle's program does not hold: each item's
 * name, the names of the arrays, the stages, branches and bodies.  text() lays the graph out with libeagle's
 * layout engine (eagle_layout_run) and draws it with libeagle's text drawer
 * (eagle_picture_text), the two that eagle.Graph's print(g) uses, with the
 * links derived from what each item reads and writes exactly as eagle derives
 * a graph's edges from its planes; so a C++ graph and an eagle.Graph of the
 * same shape (the same names, the same planes) print the same picture.
 */
#ifndef EAGLE_VIEW_HPP
#define EAGLE_VIEW_HPP

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "eagle/eagle.h"
#include "eagle/error.hpp"
#include "eagle/exec.hpp"

namespace eagle
{

/**
 * @brief A host program built through its view, and the view's text picture.
 *
 * Name the arrays the items touch (by the pointer their accesses give), build
 * the program through the view, then print it; program() is the program
 * itself, to finalize and run.  The body of an ifThen, ifThenElse or loop is
 * a GraphView of its own, one sequence of items (no stage or branch), drawn
 * in a frame as eagle.Graph draws its device constructs; its names count
 * here too (a refused ifThen, ifThenElse or loop leaves the view as it was).
 * A body may pass planes from one item to the item directly after it only.
 * A stage is a fork when it has two branches or more (what
 * eagle.Graph.add_group adds); its label says the schedule it was opened with.  Every item is drawn (eagle.Graph's picture folds a long run of
 * alike nodes into one box; the view never does).
 *
 * @code
 * // x: n doubles; scale: the kernel x[i] *= c
 * eagle::GraphView view("eagle.Graph");
 * view.name(x, "x").name(&total, "total");
 * view.kernel("scale", {scale, {eagle::exec::arg(x), eagle::exec::arg(2.0)}, n, EAGLE_PER_SAMPLE,
 *                       {eagle::exec::access(x, n, eagle::exec::Role::ReadWrite)}})
 *     .stage()
 *     .reduce("sum", x, &total, n, eagle::exec::Op::Sum);
 * view.program().finalize().run();
 * std::string picture = view.text(); // "eagle.Graph 2 nodes · 0 groups · backend: cpu\n..."
 * @endcode
 */
class GraphView
{
  public:
    /** The picture's first line starts with `title` (eagle.Graph's says "eagle.Graph"). */
    explicit GraphView(std::string title = "eagle::exec::Program") : title_(std::move(title)) {}

    /** The name of the array at `array` (an access's data pointer) in every picture. */
    GraphView &name(const void *array, std::string name)
    {
        names_[reinterpret_cast<std::uintptr_t>(array)] = std::move(name);
        return *this;
    }
    /** Open a new stage (Program::stage). */
    GraphView &stage(exec::Schedule schedule = exec::Schedule::WorkShare)
    {
        program_.stage(schedule);
        stages_.push_back({schedule, {{}}});
        return *this;
    }
    /** Open the next branch of the current stage (Program::branch). */
    GraphView &branch()
    {
        program_.branch();
        stages_.back().branches.emplace_back();
        return *this;
    }
    /** Append a native kernel call, its box saying `name` (Program::kernel). */
    GraphView &kernel(std::string name, const exec::Call &call)
    {
        checkName(name, "kernel");
        program_.kernel(call);
        return add(std::move(name), call.accesses);
    }
    /** out[0] = op over x[0:n], its box saying `name` (Program::reduce). */
    template <class T>
    GraphView &reduce(std::string name, const T *x, T *out, std::int64_t n, exec::Op op)
    {
        checkName(name, "reduce");
        program_.reduce(x, out, n, op);
        return add(Item{std::move(name),
                        {exec::access(x, n, exec::Role::Read),
                         exec::access(static_cast<const T *>(out), 1, exec::Role::Write)},
                        EAGLE_ROLE_BUILTIN});
    }

    /** Run `then` when *cell != 0 (Program::ifThen): a frame "if guard" around its items. */
    GraphView &ifThen(const std::uint32_t *cell, GraphView then)
    {
        auto names = joinedNames({&then}, "ifThen");
        program_.ifThen(cell, std::move(then.program_));
        names_ = std::move(names);
        return construct("if guard", cell, {std::move(then.items_)}, false);
    }
    /** Run `then` when *cell != 0, else `otherwise` (Program::ifThenElse): a frame "if guard ·
     *  else" around the two side by side (an arm with no item is left out). */
    GraphView &ifThenElse(const std::uint32_t *cell, GraphView then, GraphView otherwise)
    {
        auto names = joinedNames({&then, &otherwise}, "ifThenElse");
        program_.ifThenElse(cell, std::move(then.program_), std::move(otherwise.program_));
        names_ = std::move(names);
        std::string title = otherwise.items_.empty() ? "if guard" : "if guard \xc2\xb7 else";
        return construct(std::move(title), cell,
                         {std::move(then.items_), std::move(otherwise.items_)}, false);
    }
    /** A loop over `body` (Program::loop): a frame around its items, titled as eagle.Graph's
     *  device loop ("repeat guard times", "repeat ≤ N", "repeat while guard"). */
    GraphView &loop(const std::uint32_t *cell, exec::Loop kind, std::int64_t maxIters,
                    GraphView body)
    {
        auto names = joinedNames({&body}, "loop");
        program_.loop(cell, kind, maxIters, std::move(body.program_));
        names_ = std::move(names);
        std::string title = kind == exec::Loop::Count ? "repeat guard times"
            : maxIters >= 0 ? "repeat \xe2\x89\xa4 " + std::to_string(maxIters)
                            : "repeat while guard";
        return construct(std::move(title), cell, {std::move(body.items_)}, true);
    }

    /** The program built so far, still owned by the view: finalize and run it. */
    exec::Program &program() noexcept { return program_; }

    /**
     * The text picture: the header line (the title, the item and group counts,
     * the backend), then the stages in box-drawing characters, as print(g) draws
     * an eagle.Graph.  eagle::Error when a stage or a construct's frame has no
     * item, an array an item touches has no name, two different views of one
     * memory overlap where one is written (the view links the very same views
     * only), a body passes a plane other than from one item to the item directly
     * after it (print(g) draws that as a link through the body, which the view
     * does not draw), or the names of what an item passes on are wider than the
     * room under its box.
     */
    std::string text() const { return draw("eagle::GraphView::text", Face::Text); }
    /** The Mermaid flowchart, as eagle.Graph.to_mermaid writes it (text()'s refusals, and link
     *  labels past 24 columns). */
    std::string mermaid() const { return draw("eagle::GraphView::mermaid", Face::Mermaid); }
    /** The Graphviz DOT graph, as eagle.Graph.to_dot writes it (mermaid()'s refusals). */
    std::string dot() const { return draw("eagle::GraphView::dot", Face::Dot); }

    /** The text picture, written to `out`. */
    friend std::ostream &operator<<(std::ostream &out, const GraphView &view)
    {
        return out << view.text();
    }

  private:
    /** Columns eagle.Graph's picture gives a box's text before cutting it with "…". */
    static constexpr std::int32_t MAX_LABEL = 24;

    /** A box, or a construct (a title): a frame around its arms, side by side (an if's), or
     *  around its one body (a loop's); its accesses are its guard cell's and its arms'. */
    struct Item {
        std::string name;
        std::vector<eagle_access> accesses;
        std::int32_t role = EAGLE_ROLE_KERNEL; // EAGLE_ROLE_BUILTIN for a reduce, as eagle.reduce
        std::string title = {};
        std::vector<std::vector<Item>> arms = {};
        bool loop = false; // its one body runs again and again, else at most one arm runs
    };
    struct Stage {
        exec::Schedule schedule;
        std::vector<std::vector<std::int32_t>> branches;
    };
    /** The owner pairs data flows along, in first-seen order, and the planes of each. */
    struct Links {
        std::vector<eagle_layout_pair> pairs;
        std::vector<std::vector<std::string>> planes;
        std::map<std::pair<std::int32_t, std::int32_t>, std::size_t> index; // a pair -> its place

        void add(std::int32_t src, std::int32_t dst, const std::string &plane)
        {
            auto found = index.emplace(std::make_pair(src, dst), pairs.size());
            if (found.second) {
                pairs.push_back({src, dst});
                planes.emplace_back();
            }
            std::vector<std::string> &names = planes[found.first->second];
            if (std::find(names.begin(), names.end(), plane) == names.end())
                names.push_back(plane);
        }
    };
    /** One access of an item to a view: what the edge walk reads. */
    struct Access {
        std::int32_t item;
        bool reads, writes;
    };

    enum class Face {
        Text,
        Mermaid,
        Dot
    };
    /** A picture the view cannot draw truly: draw() names the method it was asked of. */
    struct Refusal {
        std::string what;
    };

    [[noreturn]] static void fail(const std::string &what) { throw Refusal{what}; }

    static std::int32_t columns(const std::string &s)
    {
        return static_cast<std::int32_t>(std::count_if(s.begin(), s.end(), [](char c) {
            return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
        }));
    }

    static const char *schedule(exec::Schedule s)
    {
        return s == exec::Schedule::BranchTasks ? "branch_tasks" : "work_share";
    }

    void checkName(const std::string &name, const char *method) const
    {
        if (columns(name) > MAX_LABEL)
            throw Error(EAGLE_ERR_ARG, std::string("eagle::GraphView::") + method + ": the name '"
                                           + name + "' is wider than "
                                           + std::to_string(MAX_LABEL)
                                           + " columns, which eagle.Graph's picture cuts: give "
                                             "a shorter one");
    }

    GraphView &add(std::string name, std::vector<eagle_access> accesses)
    {
        return add(Item{std::move(name), std::move(accesses)});
    }

    GraphView &add(Item item)
    {
        if (stages_.empty()) // the program opened a work-sharing stage for it
            stages_.push_back({exec::Schedule::WorkShare, {{}}});
        stages_.back().branches.back().push_back(static_cast<std::int32_t>(items_.size()));
        items_.push_back(std::move(item));
        return *this;
    }

    /** This view's names joined by the bodies' of a construct, each body one sequence (no stage
     *  or branch of its own); the view is left as it is, so a refused call changes nothing. */
    std::map<std::uintptr_t, std::string>
    joinedNames(std::initializer_list<const GraphView *> bodies, const char *method) const
    {
        std::map<std::uintptr_t, std::string> names = names_;
        for (const GraphView *view : bodies) {
            if (view->stages_.size() > 1
                || (view->stages_.size() == 1 && view->stages_[0].branches.size() > 1))
                throw Error(EAGLE_ERR_ARG, std::string("eagle::GraphView::") + method
                                               + ": a body is drawn as one sequence of items, as "
                                                 "eagle.Graph's device constructs are: build it "
                                                 "with no stage() or branch()");
            for (const auto &[array, name] : view->names_) {
                auto found = names.emplace(array, name).first;
                if (found->second != name)
                    throw Error(EAGLE_ERR_ARG,
                                std::string("eagle::GraphView::") + method + ": an array is named '"
                                    + found->second + "' here and '" + name
                                    + "' in the body: give it one name");
            }
        }
        return names;
    }

    /** A construct over `cell` and `arms`: eagle's planes of one, the guard read, then what its
     *  arms read, then what they write. */
    GraphView &construct(std::string title, const std::uint32_t *cell,
                         std::vector<std::vector<Item>> arms, bool loop)
    {
        std::vector<eagle_access> accesses = {exec::access(cell, 1, exec::Role::Read)};
        for (bool reads : {true, false})
            for (const auto &arm : arms)
                for (const Item &item : arm)
                    for (const eagle_access &a : item.accesses)
                        if ((a.role == EAGLE_READ) == reads)
                            accesses.push_back(a);
        Item item{title, std::move(accesses), EAGLE_ROLE_BUILTIN, title, std::move(arms), loop};
        return add(std::move(item));
    }

    /** What the layout engine is given: the blocks in preorder, the node of each box (the
     *  graph's items, then the items inside constructs, numbered as they are met), its owner. */
    struct Model {
        std::vector<eagle_layout_block> blocks;
        std::vector<const Item *> nodes;
        std::vector<std::int32_t> owners;
        std::map<std::int32_t, std::string> titles; // a frame's block -> its title
    };

    /** A stage's blocks: its one branch as a sequence (one block alone), or a fork of its
     *  branches, each a sequence (eagle.viz's model of a stage). */
    void tree(const Stage &stage, Model &m) const
    {
        std::vector<std::vector<const Item *>> branches;
        for (const auto &b : stage.branches) {
            if (b.empty())
                continue;
            branches.emplace_back();
            for (std::int32_t k : b)
                branches.back().push_back(&items_[static_cast<std::size_t>(k)]);
        }
        fork(branches, m,
             [&](const Item *item) { return static_cast<std::int32_t>(item - items_.data()); });
    }

    /** Side by side when there are two or more (each a sequence, one block wrapped too), else
     *  the one sequence (one block alone); `node` numbers an item where it is met. */
    template <class Number>
    void fork(const std::vector<std::vector<const Item *>> &branches, Model &m, Number node) const
    {
        if (branches.size() == 1)
            return seq(branches[0], m, node, false);
        m.blocks.push_back({EAGLE_LAYOUT_FORK, static_cast<std::int32_t>(branches.size()), -1, 0});
        for (const auto &b : branches)
            seq(b, m, node, true);
    }

    template <class Number>
    void seq(const std::vector<const Item *> &items, Model &m, Number node, bool wrap) const
    {
        if (items.size() > 1 || wrap)
            m.blocks.push_back({EAGLE_LAYOUT_SEQ, static_cast<std::int32_t>(items.size()), -1, 0});
        for (const Item *item : items)
            block(*item, node(item), m);
    }

    /** Node `k`'s block: its box, or its construct's frame around its arms, whose items are
     *  numbered after every node met so far and owned by k's owner. */
    void block(const Item &item, std::int32_t k, Model &m) const
    {
        if (item.title.empty()) {
            m.blocks.push_back({EAGLE_LAYOUT_BOX, 0, k, columns(item.name)});
            return;
        }
        std::vector<std::vector<const Item *>> arms;
        for (const auto &arm : item.arms) {
            if (arm.empty())
                continue;
            arms.emplace_back();
            for (const Item &inner : arm)
                arms.back().push_back(&inner);
        }
        if (arms.empty())
            fail("node " + std::to_string(k) + " ('" + item.title
                 + "') has no item in its frame: give its body an item");
        m.titles[static_cast<std::int32_t>(m.blocks.size())] = item.title;
        m.blocks.push_back({EAGLE_LAYOUT_FRAME, 1, -1, columns(item.title)});
        std::int32_t owner = m.owners[static_cast<std::size_t>(k)];
        fork(arms, m, [&m, owner](const Item *inner) {
            m.nodes.push_back(inner);
            m.owners.push_back(owner);
            return static_cast<std::int32_t>(m.nodes.size() - 1);
        });
    }

    /** What tells one view from another: its device, address, item size, shape and strides. */
    static std::vector<std::int64_t> key(const eagle_view &v)
    {
        std::vector<std::int64_t> out = {v.device, static_cast<std::int64_t>(v.data), v.itemsize};
        for (std::int32_t d = 0; d < v.ndim; ++d) {
            out.push_back(v.shape[d]);
            out.push_back(v.strides[d]);
        }
        return out;
    }

    /** The accesses of the items grouped by the very view they touch, in first-seen order, each
     *  group's accesses in item order; empty views carry no link. */
    std::vector<std::pair<const eagle_view *, std::vector<Access>>> groups() const
    {
        std::map<std::vector<std::int64_t>, std::size_t> index;
        std::vector<std::pair<const eagle_view *, std::vector<Access>>> out;
        for (std::size_t k = 0; k < items_.size(); ++k)
            for (const eagle_access &a : items_[k].accesses) {
                const eagle_view &v = a.view;
                if (std::any_of(v.shape, v.shape + v.ndim, [](std::int64_t n) { return n == 0; }))
                    continue;
                auto found = index.emplace(key(v), out.size());
                if (found.second)
                    out.push_back({&v, {}});
                out[found.first->second].second.push_back(
                    {static_cast<std::int32_t>(k), a.role != EAGLE_WRITE, a.role != EAGLE_READ});
            }
        return out;
    }

    /** The bytes a view spans: [first, last). */
    static std::pair<std::int64_t, std::int64_t> span(const eagle_view &v)
    {
        std::int64_t lo = 0, hi = 0;
        for (std::int32_t d = 0; d < v.ndim; ++d)
            (v.strides[d] < 0 ? lo : hi) += (v.shape[d] - 1) * v.strides[d];
        auto at = static_cast<std::int64_t>(v.data);
        return {at + lo, at + hi + v.itemsize};
    }

    /** Refuse two different views of one memory where one is written: eagle links those through
     *  its overlap test, the view only the very same views.  A sweep over the spans by start. */
    static void
    refuseOverlaps(const std::vector<std::pair<const eagle_view *, std::vector<Access>>> &g)
    {
        struct Span {
            std::int64_t device, first, last;
            bool writes;
            std::int32_t item;
        };
        std::vector<Span> spans;
        for (const auto &[view, accesses] : g) {
            auto [first, last] = span(*view);
            bool writes = std::any_of(accesses.begin(), accesses.end(),
                                      [](const Access &a) { return a.writes; });
            spans.push_back({view->device, first, last, writes, accesses[0].item});
        }
        std::sort(spans.begin(), spans.end(), [](const Span &a, const Span &b) {
            return std::tie(a.device, a.first) < std::tie(b.device, b.first);
        });
        for (std::size_t i = 0; i < spans.size(); ++i)
            for (std::size_t j = i + 1; j < spans.size() && spans[j].device == spans[i].device
                 && spans[j].first < spans[i].last;
                 ++j)
                if (spans[i].writes || spans[j].writes)
                    fail("items " + std::to_string(std::min(spans[i].item, spans[j].item)) + " and "
                         + std::to_string(std::max(spans[i].item, spans[j].item))
                         + " touch overlapping but different views of one memory: the view links "
                           "accesses to the very same view only; give them the same view");
    }

    const std::string &arrayName(const eagle_view &v, std::int32_t item) const
    {
        auto found = names_.find(static_cast<std::uintptr_t>(v.data));
        if (found == names_.end())
            fail("item " + std::to_string(item) + " ('"
                 + items_[static_cast<std::size_t>(item)].name
                 + "') touches an array no name() names: name it by its pointer");
        return found->second;
    }

    /** The owner pairs that data flows along and the planes of each, from eagle's edge rule: per
     *  view, a read depends on the last writer (RAW); a write on the readers since (WAR), or on
     *  the last writer when there are none (WAW).  The edges sorted as eagle.Graph.edges() sorts
     *  them, then the RAW and WAW ones grouped by pair in that order. */
    Links dataLinks() const
    {
        auto grouped = groups();
        refuseOverlaps(grouped);
        std::vector<std::tuple<std::int32_t, std::int32_t, std::string, std::string>> edges;
        for (const auto &group : grouped) {
            const std::string &plane = arrayName(*group.first, group.second[0].item);
            const Access *last = nullptr;
            std::vector<const Access *> readers;
            auto edge = [&](const Access &src, const Access &dst, const char *kind) {
                if (src.item != dst.item)
                    edges.emplace_back(src.item, dst.item, plane, kind);
            };
            for (const Access &acc : group.second) {
                if (acc.reads && last)
                    edge(*last, acc, "RAW");
                if (acc.writes) {
                    bool others = false;
                    for (const Access *r : readers)
                        if (r->item != acc.item) {
                            edge(*r, acc, "WAR");
                            others = true;
                        }
                    if (!others && last && !acc.reads)
                        edge(*last, acc, "WAW");
                    last = &acc;
                    readers.clear();
                } else if (acc.reads) {
                    readers.push_back(&acc);
                }
            }
        }
        std::sort(edges.begin(), edges.end());
        edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
        Links out;
        for (const auto &[src, dst, plane, kind] : edges) // a WAR edge only orders: its source
            if (kind != "WAR")                            // read what its destination overwrites
                out.add(src, dst, plane);
        return out;
    }

    /** The planes passed between the nodes inside the constructs' bodies, found as eagle.viz
     *  finds them for print(g): walking a body in run order, a read flows from the plane's last
     *  writers; after an if, a plane's last writers are every arm's and those before it; a loop's
     *  body runs again, so a read flows also from a write later in the body (the turn before). */
    class BodyFlows
    {
      public:
        struct Flow {
            std::int32_t writer, reader;
            const eagle_view *plane;
            bool carried; // written later in a loop's body, read in its next turn
        };
        /** Every flow found so far, in the order print(g) finds them. */
        std::vector<Flow> flows;

        explicit BodyFlows(const Model &m)
        {
            for (std::size_t k = 0; k < m.nodes.size(); ++k)
                number_[m.nodes[k]] = static_cast<std::int32_t>(k);
        }

        /** The flows inside a construct of the graph (its bodies start from no writer: what
         *  flows into the construct is the graph's edges). */
        void construct(const Item &item)
        {
            Writers none;
            run(item, none);
        }

        /** Whether the flow's reader is the item directly after its writer in one body. */
        bool consecutive(const Flow &f) const
        {
            auto writer = at_.at(f.writer), reader = at_.at(f.reader);
            return !f.carried && writer.first == reader.first && reader.second == writer.second + 1;
        }

      private:
        using Turn = std::vector<std::pair<std::int32_t, const Item *>>;
        struct Writers {
            std::map<std::vector<std::int64_t>, std::vector<std::int32_t>>
                last;             // view key -> nodes
            Turn *turn = nullptr; // the boxes a turn of the innermost loop runs; null outside loops
        };

        void run(const Item &construct, Writers &inside)
        {
            if (!construct.loop) { // at most one arm runs, each from the writers before it
                std::vector<Writers> arms(construct.arms.size(), inside);
                for (std::size_t a = 0; a < arms.size(); ++a)
                    walk(construct.arms[a], arms[a]);
                for (const Writers &arm : arms)
                    join(inside, arm);
                return;
            }
            Turn turn;
            Writers body{inside.last, &turn};
            for (const auto &items : construct.arms)
                walk(items, body);
            carry(body, turn);
            join(inside, body); // the body may run no time
            if (inside.turn)
                inside.turn->insert(inside.turn->end(), turn.begin(), turn.end());
        }

        void walk(const std::vector<Item> &body, Writers &writers)
        {
            for (std::size_t p = 0; p < body.size(); ++p) {
                if (!body[p].title.empty()) {
                    run(body[p], writers);
                    continue;
                }
                std::int32_t k = number_.at(&body[p]);
                at_[k] = {&body, p};
                if (writers.turn)
                    writers.turn->push_back({k, &body[p]});
                step(k, body[p], writers, flows, false);
            }
        }

        /** Node k runs: its reads flow from the planes' last writers, its writes become them. */
        static void step(std::int32_t k, const Item &item, Writers &writers, std::vector<Flow> &out,
                         bool carried)
        {
            for (const eagle_access &a : item.accesses) {
                auto found = writers.last.find(key(a.view));
                if (a.role == EAGLE_WRITE || found == writers.last.end())
                    continue;
                std::vector<std::int32_t> from = found->second;
                std::sort(from.begin(), from.end());
                for (std::int32_t w : from)
                    if (w != k)
                        out.push_back({w, k, &a.view, carried});
            }
            for (const eagle_access &a : item.accesses)
                if (a.role != EAGLE_READ)
                    writers.last[key(a.view)] = {k};
        }

        /** A loop's turn again from the writers it left: the reads that flow from a writer at or
         *  after the reader in the turn. */
        void carry(const Writers &after, const Turn &turn)
        {
            std::map<std::int32_t, std::size_t> place;
            for (std::size_t i = 0; i < turn.size(); ++i)
                place[turn[i].first] = i;
            Writers again{after.last, nullptr};
            std::vector<Flow> found;
            for (const auto &[k, item] : turn)
                step(k, *item, again, found, true);
            for (const Flow &f : found) {
                auto writer = place.find(f.writer);
                if (writer != place.end() && writer->second >= place.at(f.reader))
                    flows.push_back(f);
            }
        }

        static void join(Writers &inside, const Writers &arm)
        {
            for (const auto &[view, nodes] : arm.last) {
                std::vector<std::int32_t> &known = inside.last[view];
                for (std::int32_t n : nodes)
                    if (std::find(known.begin(), known.end(), n) == known.end())
                        known.push_back(n);
            }
        }

        std::map<const Item *, std::int32_t> number_;
        std::map<std::int32_t, std::pair<const std::vector<Item> *, std::size_t>>
            at_; // body, place
    };

    /** The flows inside the bodies added to `links`, as print(g) adds them after the graph's
     *  edges; a flow not between consecutive items of one body is refused: print(g) draws it as
     *  a link through the body the view does not draw. */
    void addBodyFlows(const Model &model, Links &links) const
    {
        BodyFlows inside(model);
        for (const Item &item : items_)
            if (!item.title.empty())
                inside.construct(item);
        for (const BodyFlows::Flow &f : inside.flows) {
            std::int32_t owner = model.owners[static_cast<std::size_t>(f.reader)];
            const std::string &plane = arrayName(*f.plane, owner);
            auto node = [&model](std::int32_t k) {
                return "node " + std::to_string(k) + " ('"
                    + model.nodes[static_cast<std::size_t>(k)]->name + "')";
            };
            if (!inside.consecutive(f))
                fail(node(f.reader) + " in the body of " + node(owner) + " reads '" + plane
                     + "', which " + node(f.writer)
                     + (f.carried ? " writes later in the loop's body, for its next turn"
                                  : " writes, not directly before it in one body")
                     + ": print(g) draws that as a link the view does not draw (it draws a body's "
                       "planes between consecutive items only); build the body so that each item "
                       "reads only planes the item directly before it writes");
            links.add(f.writer, f.reader, plane);
        }
    }

    /** The plane names under each exit (every plane its links carry, first seen first). */
    std::vector<std::string> exitTexts(const eagle_layout &lay, const Links &links,
                                       const Model &model) const
    {
        std::map<std::int32_t, std::vector<std::int32_t>> leaving; // a node -> its links' pairs
        for (std::int32_t k = 0; k < lay.n_links; ++k)
            if (lay.links[k].pair >= 0)
                leaving[lay.links[k].src].push_back(lay.links[k].pair);
        std::vector<std::string> out;
        for (std::int32_t e = 0; e < lay.n_exits; ++e) {
            const eagle_layout_exit &exit = lay.exits[e];
            std::vector<std::string> seen;
            for (std::int32_t pair : leaving[exit.node])
                for (const std::string &p : links.planes[static_cast<std::size_t>(pair)])
                    if (std::find(seen.begin(), seen.end(), p) == seen.end())
                        seen.push_back(p);
            std::string text;
            for (const std::string &p : seen)
                text += (text.empty() ? "" : ", ") + p;
            if (columns(text) > exit.room)
                fail("the planes item " + std::to_string(exit.node) + " ('"
                     + model.nodes[static_cast<std::size_t>(exit.node)]->name + "') passes on, '" + text
                     + "', are wider than the " + std::to_string(exit.room)
                     + " columns under its box, which eagle.Graph's picture cuts: give the arrays "
                       "shorter names");
            out.push_back(std::move(text));
        }
        return out;
    }

    std::string header() const
    {
        std::size_t groups = std::count_if(stages_.begin(), stages_.end(),
                                           [](const Stage &s) { return s.branches.size() > 1; });
        auto count = [](std::size_t n, const char *what) {
            return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
        };
        return title_ + " " + count(items_.size(), "node") + " \xc2\xb7 " + count(groups, "group")
            + " \xc2\xb7 backend: cpu";
    }

    std::string draw(const char *api, Face face) const
    {
        try {
            return drawn(api, face);
        } catch (const Refusal &refusal) {
            throw Error(EAGLE_ERR_ARG, std::string(api) + ": " + refusal.what);
        }
    }

    /** The layout of the model, then the face drawn from it with the texts it says. */
    std::string drawn(const char *api, Face face) const
    {
        for (std::size_t s = 0; s < stages_.size(); ++s)
            if (std::all_of(stages_[s].branches.begin(), stages_[s].branches.end(),
                            [](const std::vector<std::int32_t> &b) { return b.empty(); }))
                fail("stage " + std::to_string(s) + " has no item: add one, or open no stage");
        Links links = dataLinks();
        Model model;
        for (std::size_t k = 0; k < items_.size(); ++k) { // the graph's nodes first, then the
            model.nodes.push_back(&items_[k]);            // nodes inside its constructs
            model.owners.push_back(static_cast<std::int32_t>(k));
        }
        for (const Stage &stage : stages_)
            tree(stage, model);
        addBodyFlows(model, links);
        std::vector<std::string> labels; // no stage is folded: a label is its note too
        std::vector<std::int32_t> widths;
        for (std::size_t s = 0; s < stages_.size(); ++s) {
            labels.push_back("stage " + std::to_string(s) + " " + schedule(stages_[s].schedule));
            widths.push_back(columns(labels.back()));
        }
        eagle_layout_input in{};
        in.blocks = model.blocks.data();
        in.n_blocks = static_cast<std::int32_t>(model.blocks.size());
        in.n_stages = static_cast<std::int32_t>(stages_.size());
        in.label_w = widths.data();
        in.columns = 1;
        in.owners = model.owners.data();
        in.n_nodes = static_cast<std::int32_t>(model.owners.size());
        in.pairs = links.pairs.data();
        in.n_pairs = static_cast<std::int32_t>(links.pairs.size());
        eagle_layout *laid = nullptr;
        int status = eagle_layout_run(&in, &laid);
        std::unique_ptr<eagle_layout, void (*)(eagle_layout *)> lay(laid, eagle_layout_free);
        detail::check(status, api);

        std::vector<std::string> exits, pairs;
        if (face == Face::Text)
            exits = exitTexts(*lay, links, model);
        else
            pairs = pairTexts(links);
        std::string head = header();
        std::vector<const char *> nodes, frames, exitTexts, labelTexts, pairLabels;
        std::vector<std::int32_t> roles;
        for (const Item *item : model.nodes) {
            nodes.push_back(item->name.c_str());
            roles.push_back(item->role);
        }
        for (std::int32_t k = 0; k < lay->n_frames; ++k)
            frames.push_back(model.titles.at(lay->frames[k].block).c_str());
        for (const std::string &e : exits)
            exitTexts.push_back(e.c_str());
        for (const std::string &l : labels)
            labelTexts.push_back(l.c_str());
        for (const std::string &p : pairs)
            pairLabels.push_back(p.c_str());
        eagle_picture_texts texts{};
        texts.header = head.c_str();
        texts.nodes = nodes.data();
        texts.roles = roles.data();
        texts.n_nodes = static_cast<std::int32_t>(nodes.size());
        texts.frames = frames.data();
        texts.n_frames = static_cast<std::int32_t>(frames.size());
        texts.exits = exitTexts.data();
        texts.n_exits = static_cast<std::int32_t>(exitTexts.size());
        texts.stages = texts.notes = labelTexts.data();
        texts.n_stages = static_cast<std::int32_t>(labelTexts.size());
        texts.pairs = pairLabels.data();
        texts.n_pairs = static_cast<std::int32_t>(pairLabels.size());
        char *raw = nullptr;
        status = face == Face::Text ? eagle_picture_text(lay.get(), &texts, &raw)
            : face == Face::Mermaid ? eagle_picture_mermaid(&in, lay.get(), &texts, &raw)
                                    : eagle_picture_dot(&in, lay.get(), &texts, &raw);
        std::unique_ptr<char, void (*)(void *)> picture(raw, eagle_free);
        detail::check(status, api);
        return std::string(picture.get());
    }

    /** Each pair's link label: its planes, whole (eagle.Graph's faces cut them past 24 columns). */
    std::vector<std::string> pairTexts(const Links &links) const
    {
        std::vector<std::string> out;
        for (std::size_t p = 0; p < links.pairs.size(); ++p) {
            std::string text;
            for (const std::string &plane : links.planes[p])
                text += (text.empty() ? "" : ", ") + plane;
            if (columns(text) > MAX_LABEL)
                fail("the planes from item " + std::to_string(links.pairs[p].src) + " to item "
                     + std::to_string(links.pairs[p].dst) + ", '" + text + "', are wider than "
                     + std::to_string(MAX_LABEL)
                     + " columns, which eagle.Graph's picture cuts: give the arrays shorter names");
            out.push_back(std::move(text));
        }
        return out;
    }

    std::string title_;
    exec::Program program_;
    std::vector<Item> items_;
    std::vector<Stage> stages_;
    std::map<std::uintptr_t, std::string> names_;
};

} // namespace eagle

#endif // EAGLE_VIEW_HPP

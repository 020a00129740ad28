// eagle::GraphView from C++: a program built through its view, its text picture
// (test_cpp.py compares it with print(g) of the same eagle.Graph), and the
// view's refusals.
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "harness.hpp"

using eagle::exec::access;
using eagle::exec::arg;
using eagle::exec::Role;

namespace
{

eagle_kernel_fn kernel(std::uintptr_t address)
{
    return reinterpret_cast<eagle_kernel_fn>(address);
}

// The view's face `face` (0: text, 1: Mermaid, 2: DOT) into out.
void copy_out(const eagle::GraphView &view, int face, char *out, std::size_t size)
{
    std::string text = face == 0 ? view.text() : face == 1 ? view.mermaid() : view.dot();
    CHECK(text.size() < size);
    std::memcpy(out, text.c_str(), text.size() + 1);
}

// A loop body's turn counter and its first kernel: cell -= 1, then x *= 2.
eagle::GraphView countdown_doubling(std::uintptr_t decrement, std::uintptr_t scale,
                                    std::uint32_t *cell, double *x, std::int64_t n)
{
    eagle::GraphView body;
    body.name(cell, "cell")
        .kernel("decrement",
                {kernel(decrement), {arg(cell)}, 1, 0, {access(cell, 1, Role::ReadWrite)}})
        .kernel("scale",
                {kernel(scale),
                 {arg(x), arg(2.0)},
                 n,
                 EAGLE_PER_SAMPLE,
                 {access(x, n, Role::ReadWrite)}});
    return body;
}

} // namespace

// A fork of two branches (a *= 2, a += 1 | b *= 3) joined by acc += 0.5 a, then
// acc += 1.5 b: built through a GraphView titled as eagle.Graph's picture, run
// once; its face `face` into out (text() and operator<< print the same).
EXPORT int cpp_view_fork_join(std::uintptr_t scale, std::uintptr_t shift, std::uintptr_t axpy,
                              double *a, double *b, double *acc, std::int64_t n, int face,
                              char *out, std::size_t size)
{
    return harness::run([&] {
        std::vector<eagle::exec::NodeShape> nodes(3, {n, true});
        eagle::GraphView view("eagle.Graph");
        view.name(a, "a").name(b, "b").name(acc, "acc");
        view.stage(eagle::exec::resolve(true, 2, nodes))
            .kernel("scale",
                    {kernel(scale),
                     {arg(a), arg(2.0)},
                     n,
                     EAGLE_PER_SAMPLE,
                     {access(a, n, Role::ReadWrite)}})
            .kernel("shift",
                    {kernel(shift),
                     {arg(a), arg(1.0)},
                     n,
                     EAGLE_PER_SAMPLE,
                     {access(a, n, Role::ReadWrite)}})
            .branch()
            .kernel("scale",
                    {kernel(scale),
                     {arg(b), arg(3.0)},
                     n,
                     EAGLE_PER_SAMPLE,
                     {access(b, n, Role::ReadWrite)}});
        for (double *x : {a, b})
            view.stage().kernel("axpy",
                                {kernel(axpy),
                                 {arg(x), arg(acc), arg(x == a ? 0.5 : 1.5)},
                                 n,
                                 EAGLE_PER_SAMPLE,
                                 {access(x, n, Role::Read), access(acc, n, Role::ReadWrite)}});
        view.program().finalize().run();
        std::ostringstream printed;
        printed << view;
        CHECK(printed.str() == view.text());
        copy_out(view, face, out, size);
    });
}

// A reduce after a kernel, in the implicit first stage then a stage of its own:
// its face into out.
EXPORT int cpp_view_reduce(std::uintptr_t scale, double *x, double *total, std::int64_t n, int face,
                           char *out, std::size_t size)
{
    return harness::run([&] {
        eagle::GraphView view("eagle.Graph");
        view.name(x, "x").name(total, "total");
        view.kernel("scale",
                    {kernel(scale),
                     {arg(x), arg(2.0)},
                     n,
                     EAGLE_PER_SAMPLE,
                     {access(x, n, Role::ReadWrite)}})
            .stage()
            .reduce("sum", x, total, n, eagle::exec::Op::Sum);
        view.program().finalize().run();
        copy_out(view, face, out, size);
    });
}

// host_tests.cpp's cpp_control through a GraphView: a While loop (at most 3
// turns) over a decrement and x *= 2, an if/else on a flag (x += 1, else x -=
// 1), then a mix; run once, its face into out.
EXPORT int cpp_view_control(std::uintptr_t scale, std::uintptr_t shift, std::uintptr_t decrement,
                            std::uintptr_t mix, std::uint32_t *cell, const std::uint32_t *flag,
                            double *x, double *result, std::int64_t n, int face, char *out,
                            std::size_t size)
{
    return harness::run([&] {
        auto shifting = [&](double d) {
            eagle::GraphView arm;
            arm.kernel("shift",
                       {kernel(shift),
                        {arg(x), arg(d)},
                        n,
                        EAGLE_PER_SAMPLE,
                        {access(x, n, Role::ReadWrite)}});
            return arm;
        };
        eagle::GraphView body = countdown_doubling(decrement, scale, cell, x, n);
        eagle::GraphView view("eagle.Graph");
        view.name(x, "x").name(flag, "flag").name(result, "out");
        view.loop(cell, eagle::exec::Loop::While, 3, std::move(body))
            .stage()
            .ifThenElse(flag, shifting(1.0), shifting(-1.0))
            .stage()
            .kernel("mix",
                    {kernel(mix),
                     {arg(x), arg(result)},
                     n,
                     EAGLE_PER_SAMPLE,
                     {access(x, n, Role::Read), access(result, n, Role::Write)}});
        view.program().finalize().run();
        copy_out(view, face, out, size);
    });
}

// A While loop (at most 3 turns) over a chain: a decrement, x *= 2, then out =
// mix(x), the plane x passed from the scale to the mix inside the body; run
// once, its face into out.
EXPORT int cpp_view_chain(std::uintptr_t scale, std::uintptr_t decrement, std::uintptr_t mix,
                          std::uint32_t *cell, double *x, double *result, std::int64_t n, int face,
                          char *out, std::size_t size)
{
    return harness::run([&] {
        eagle::GraphView body = countdown_doubling(decrement, scale, cell, x, n);
        body.kernel("mix",
                    {kernel(mix),
                     {arg(x), arg(result)},
                     n,
                     EAGLE_PER_SAMPLE,
                     {access(x, n, Role::Read), access(result, n, Role::Write)}});
        eagle::GraphView view("eagle.Graph");
        view.name(x, "x").name(result, "out");
        view.loop(cell, eagle::exec::Loop::While, 3, std::move(body));
        view.program().finalize().run();
        copy_out(view, face, out, size);
    });
}

// A construct refused (a name the other arm gives differently, a NULL guard the
// program refuses) leaves the view as it was: its text() refuses the same
// unnamed array before and after.
EXPORT int cpp_view_refused_constructs(std::uintptr_t scale, double *x, std::int64_t n)
{
    return harness::run([&] {
        double spare = 0;
        std::uint32_t guard = 0; // never run: only the pictures are asked for
        auto scaling = [&](double *at, std::int64_t k) {
            return eagle::exec::Call{kernel(scale),
                                     {arg(at), arg(2.0)},
                                     k,
                                     EAGLE_PER_SAMPLE,
                                     {access(at, k, Role::ReadWrite)}};
        };
        auto naming = [&](double *at,
                          const char *name) { // a body naming `at`, scaling it
            eagle::GraphView body;
            body.name(at, name).kernel("u", scaling(at, at == x ? n : 1));
            return body;
        };
        eagle::GraphView view;
        view.name(x, "x").name(&guard, "guard").kernel("s", scaling(x, n));
        view.stage().kernel("t", scaling(&spare, 1)); // spare has no name in the view
        std::string before, after, what;
        EXPECT_THROW(eagle::Error, view.text(), before);
        EXPECT_THROW(eagle::Error, view.ifThenElse(&guard, naming(&spare, "spare"), naming(x, "y")),
                     what);
        CHECK(what.find("eagle::GraphView::ifThenElse: an array is named 'x'") == 0);
        EXPECT_THROW(eagle::Error,
                     view.ifThenElse(nullptr, naming(&spare, "spare"), naming(x, "x")), what);
        EXPECT_THROW(eagle::Error, view.ifThen(nullptr, naming(&spare, "spare")), what);
        EXPECT_THROW(eagle::Error,
                     view.loop(nullptr, eagle::exec::Loop::Count, -1, naming(&spare, "spare")),
                     what);
        EXPECT_THROW(eagle::Error, view.text(), after);
        CHECK(after == before);
        CHECK(before.find("item 1 ('t') touches an array no name() names") != std::string::npos);
    });
}

// Each refusal of the view, by message, one per line into out: an unnamed
// array, two overlapping views, a stage with no item, a name past 24 columns,
// plane names wider than the room under a box.
EXPORT int cpp_view_refusals(std::uintptr_t scale, double *x, std::int64_t n, char *out,
                             std::size_t size)
{
    return harness::run([&] {
        std::string what, all;
        std::uint32_t guard = 0; // the constructs' cell (never run: only their
                                 // pictures are asked for)
        auto scaling = [&](double *at, std::int64_t k) {
            return eagle::exec::Call{kernel(scale),
                                     {arg(at), arg(2.0)},
                                     k,
                                     EAGLE_PER_SAMPLE,
                                     {access(at, k, Role::ReadWrite)}};
        };
        {
            eagle::GraphView view;
            view.kernel("scale", scaling(x, n));
            EXPECT_THROW(eagle::Error, view.text(), what);
            all += what + "\n";
        }
        {
            eagle::GraphView view;
            view.name(x, "x").name(x + 1, "tail");
            view.kernel("scale", scaling(x, n)).stage().kernel("scale", scaling(x + 1, n - 1));
            EXPECT_THROW(eagle::Error, view.text(), what);
            all += what + "\n";
        }
        {
            eagle::GraphView view;
            view.name(x, "x");
            view.kernel("scale", scaling(x, n)).stage();
            EXPECT_THROW(eagle::Error, view.text(), what);
            all += what + "\n";
        }
        {
            eagle::GraphView view;
            EXPECT_THROW(eagle::Error, view.kernel("a_name_of_twenty_five_col", scaling(x, n)),
                         what);
            all += what + "\n";
            double before = x[0];
            view.program().finalize().run(); // refused before the program took the item
            CHECK(x[0] == before);
        }
        {
            eagle::GraphView view;
            view.name(x, "a_long_plane_name_of_many_columns");
            view.kernel("s", scaling(x, n)).stage().kernel("t", scaling(x, n));
            EXPECT_THROW(eagle::Error, view.text(), what);
            all += what + "\n";
        }
        {
            eagle::GraphView view, body;
            body.name(x, "x").kernel("s", scaling(x, n)).branch().kernel("t", scaling(x, n));
            EXPECT_THROW(eagle::Error,
                         view.loop(&guard, eagle::exec::Loop::Count, -1, std::move(body)), what);
            all += what + "\n";
        }
        {
            eagle::GraphView view, body;
            view.name(&guard, "guard").loop(&guard, eagle::exec::Loop::Count, -1, std::move(body));
            EXPECT_THROW(eagle::Error, view.text(), what);
            all += what + "\n";
        }
        {
            eagle::GraphView view, body;
            body.name(x, "y").kernel("s", scaling(x, n));
            view.name(x, "x");
            EXPECT_THROW(eagle::Error, view.ifThen(&guard, std::move(body)), what);
            all += what + "\n";
        }
        {
            eagle::GraphView view;
            view.name(x, "plane_number_one").name(x + 4, "plane_two_x");
            eagle::exec::Call both{
                kernel(scale),
                {arg(x), arg(2.0)},
                4,
                EAGLE_PER_SAMPLE,
                {access(x, 4, Role::ReadWrite), access(x + 4, 4, Role::ReadWrite)}};
            view.kernel("s", both).stage().kernel("t", both);
            EXPECT_THROW(eagle::Error, view.mermaid(), what);
            all += what + "\n";
        }
        for (bool late : {false, true}) { // x read two items down the body; x read before its write
            double spare[1] = {0};
            eagle::exec::Call reading{kernel(scale),
                                      {arg(x), arg(2.0)},
                                      n,
                                      EAGLE_PER_SAMPLE,
                                      {access(x, n, Role::Read), access(spare, 1, Role::Write)}};
            eagle::GraphView view, body;
            body.name(x, "x").name(spare, "spare");
            if (late)
                body.kernel("u", reading).kernel("s", scaling(x, n));
            else
                body.kernel("s", scaling(x, n)).kernel("t", scaling(spare, 1)).kernel("u", reading);
            view.name(&guard, "guard").loop(&guard, eagle::exec::Loop::Count, -1, std::move(body));
            EXPECT_THROW(eagle::Error, view.dot(), what);
            all += what + "\n";
        }
        CHECK(all.size() < size);
        std::memcpy(out, all.c_str(), all.size() + 1);
    });
}

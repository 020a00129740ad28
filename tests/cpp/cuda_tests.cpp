// The CUDA types on a driver (the emulation, tests/fakecuda, where there is no GPU): capture,
// adoption, instantiation, replay, retuning, and their refusals.  test_cpp.py loads the kernels
// (KERNELS_CU) and passes their module image and names.
#include <cstdint>
#include <string>
#include <vector>

#include "harness.hpp"
#include "standin.hpp"

using eagle::exec::arg;

// x: n floats, copied in and back out.  Records add_one on a stream into a CapturedGraph, adds an
// add_one kernel node after it, replays both `replays` times on the caller's stream, then retunes a samples kernel (add_one_up_to) to
// `logical` samples; *stats_out: the Launcher's counters after the replays.
EXPORT int cpp_cuda_capture_replay(const char *image, const char *add_one, const char *add_one_up_to,
                                   float *x, int n, int replays, std::int64_t logical, std::int64_t *stats_out)
{
    return harness::run([&] {
        eagle::cuda::Module module(image);
        void *addOne = module.function(add_one);
        void *upTo = module.function(add_one_up_to);
        eagle::cuda::DeviceMemory buffer(sizeof(float) * static_cast<std::size_t>(n));
        buffer.copyFrom(x);
        float *dBuf = buffer.get<float>();

        eagle::cuda::Stream stream;
        eagle::cuda::Graph graph;
        graph.stream(stream.cuda());
        eagle::cuda::StreamCapturer capturer(stream.cuda());
        capturer.begin();
        standin::launch(addOne, 1, n, 0, stream.cuda(), dBuf, n);
        graph.addNode(eagle::cuda::CapturedGraph{capturer.end()});
        // then one of eagle's own kernel nodes, of fixed dimensions: each replay adds 2
        graph.stage().addKernel(addOne, {1, 1, 1}, {static_cast<std::uint32_t>(n), 1, 1},
                                {arg(dBuf), arg(n)});
        eagle::cuda::Launcher launcher = graph.launcher();
        CHECK(launcher.stream() == stream.cuda()); // the caller's stream, as asked
        std::string what;
        EXPECT_THROW(eagle::Error, graph.stage(), what); // handed over to the Launcher
        CHECK(what.find("eagle::cuda::Graph::stage: this Graph was handed to its Launcher") == 0);
        launcher.launch(replays - 1);
        launcher.launch();
        launcher.synchronize();
        auto stats = launcher.stats();
        for (int i = 0; i < EAGLE_GPU_NSTATS; ++i)
            stats_out[i] = stats[static_cast<std::size_t>(i)];

        eagle::cuda::Graph sized;
        sized.addSamplesKernel(upTo, {arg(dBuf)}, n);
        eagle::cuda::Launcher retuned = sized.launcher();
        retuned.setLogicalSize(logical);
        retuned.launch();
        retuned.synchronize();
        buffer.copyTo(x);
    });
}

// Refusals carry libeagle's status and message: a capture on the legacy stream, a kernel of no
// such name, a launcher of a graph with a captured graph whose capture was left open.
EXPORT int cpp_cuda_refusals(const char *image, char *message, std::size_t size)
{
    return harness::run([&] {
        std::string what;
        eagle::cuda::StreamCapturer legacy(nullptr);
        try {
            legacy.begin();
            CHECK(false);
        } catch (const eagle::Error &e) {
            CHECK(e.status() == EAGLE_ERR_ARG);
            what = e.what();
        }
        CHECK(what.rfind("eagle::cuda::StreamCapturer::begin: eagle_cuda_capture_begin: the legacy", 0) == 0);
        eagle::cuda::Module module(image);
        try {
            module.function("no_such_kernel");
            CHECK(false);
        } catch (const eagle::Error &e) {
            CHECK(e.status() == EAGLE_ERR_CUDA);
            what = e.what();
        }
        CHECK(what.find("cuModuleGetFunction") != std::string::npos);
        {
            eagle::cuda::Stream stream;
            eagle::cuda::StreamCapturer open(stream.cuda());
            open.begin(); // never ended: the destructor ends it and discards the graph
        }
        {
            eagle::cuda::Stream stream;
            eagle::cuda::StreamCapturer capturer(stream.cuda());
            capturer.begin();
            eagle::cuda::CapturedGraph dropped{capturer.end()}; // never handed over: destroyed here
            eagle::cuda::CapturedGraph other{nullptr};
            other = std::move(dropped);
            CHECK(dropped.cuda() == nullptr && other.cuda() != nullptr);
        }
        eagle::cuda::Stream moved;
        eagle::cuda::Stream to(std::move(moved));
        CHECK(moved.cuda() == nullptr && to.cuda() != nullptr);
        std::snprintf(message, size, "%s", what.c_str());
    });
}

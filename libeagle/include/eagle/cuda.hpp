/**
 * @file cuda.hpp
 * @brief CUDA graphs from C++: record work on a stream once, replay it in one call.
 *
 * The C++ classes of seed 002: eagle::cuda::Stream, StreamCapturer,
 * CapturedGraph, Graph and Launcher, over libeagle's C ABI.  libeagle opens
 * the CUDA driver at run time (libcuda.so.1, or the library EAGLE_LIBCUDA
 * names), so a program using this header builds with any C++17 compiler and
 * no CUDA toolkit; the kernels it launches may come from nvcc
 * (`kernel<<<grid, block, 0, stream.cuda()>>>`) or from a module
 * (eagle::cuda::Module).  The handle types are the driver's own
 * (`CUstream_st *` is cudaStream_t and CUstream, `CUgraph_st *` is cudaGraph_t
 * and CUgraph), declared here without cuda.h.  Every object works in the
 * primary context of its device, the one the CUDA runtime, CuPy and torch use.
 */
#ifndef EAGLE_CUDA_HPP
#define EAGLE_CUDA_HPP

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "eagle/eagle.h"
#include "eagle/error.hpp"

struct CUstream_st; // cudaStream_t / CUstream is CUstream_st *
struct CUgraph_st;  // cudaGraph_t / CUgraph is CUgraph_st *

namespace eagle::cuda
{

/** A CUDA stream handle (cudaStream_t, CUstream). */
using StreamHandle = CUstream_st *;
/** A CUDA graph handle (cudaGraph_t, CUgraph). */
using GraphHandle = CUgraph_st *;

namespace detail
{
inline std::uint64_t raw(const void *handle)
{
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(handle));
}
template <class T> T *handle(std::uint64_t raw)
{
    return reinterpret_cast<T *>(static_cast<std::uintptr_t>(raw));
}
} // namespace detail
using eagle::detail::check;

/** The CUDA driver's version (1000*major + 10*minor); EAGLE_ERR_NO_DRIVER where none loads. */
inline int driverVersion()
{
    int version = 0;
    check(eagle_cuda_driver_version(&version), "eagle::cuda::driverVersion");
    return version;
}

/** @brief A CUDA stream of its own (cuStreamCreate, flags 0), destroyed with the object. */
class Stream
{
  public:
    explicit Stream(int device = 0) : device_(device)
    {
        std::uint64_t s = 0;
        check(eagle_cuda_stream_create(device, &s), "eagle::cuda::Stream");
        stream_ = detail::handle<CUstream_st>(s);
    }
    ~Stream()
    {
        if (stream_)
            eagle_cuda_stream_destroy(device_, detail::raw(stream_));
    }
    Stream(Stream &&other) noexcept
        : device_(other.device_), stream_(std::exchange(other.stream_, nullptr))
    {
    }
    /** Swaps: the stream this object held is destroyed with `other`. */
    Stream &operator=(Stream &&other) noexcept
    {
        std::swap(device_, other.device_);
        std::swap(stream_, other.stream_);
        return *this;
    }
    Stream(const Stream &) = delete;
    Stream &operator=(const Stream &) = delete;

    /** The handle, for kernel launches and the CUDA runtime (cudaStream_t). */
    StreamHandle cuda() const noexcept { return stream_; }
    int device() const noexcept { return device_; }
    /** Wait on the host for the work enqueued so far. */
    void synchronize() const
    {
        check(eagle_cuda_stream_synchronize(device_, detail::raw(stream_)),
              "eagle::cuda::Stream::synchronize");
    }

  private:
    int device_;
    StreamHandle stream_;
};

/** @brief A captured CUDA graph (cudaGraph_t), owned: destroyed with the object unless handed to a Graph. */
class CapturedGraph
{
  public:
    /** Take ownership of `graph` (what StreamCapturer::end() returns). */
    explicit CapturedGraph(GraphHandle graph) noexcept : graph_(graph) {}
    ~CapturedGraph()
    {
        if (graph_)
            eagle_cuda_graph_destroy(detail::raw(graph_));
    }
    CapturedGraph(CapturedGraph &&other) noexcept : graph_(std::exchange(other.graph_, nullptr)) {}
    /** Swaps: the graph this object held is destroyed with `other`. */
    CapturedGraph &operator=(CapturedGraph &&other) noexcept
    {
        std::swap(graph_, other.graph_);
        return *this;
    }
    CapturedGraph(const CapturedGraph &) = delete;
    CapturedGraph &operator=(const CapturedGraph &) = delete;

    GraphHandle cuda() const noexcept { return graph_; }
    /** Give up ownership: the caller destroys the graph. */
    GraphHandle release() noexcept { return std::exchange(graph_, nullptr); }

  private:
    GraphHandle graph_;
};

/**
 * @brief Records the work launched on a stream between begin() and end().
 *
 * Between the two calls a launch on the stream is recorded into a CUDA graph
 * instead of running.  A capture still open when the capturer is destroyed is
 * ended and its graph discarded.
 */
class StreamCapturer
{
  public:
    explicit StreamCapturer(StreamHandle stream, int device = 0) : device_(device), stream_(stream)
    {
    }
    ~StreamCapturer()
    {
        if (open_) {
            std::uint64_t g = 0;
            if (eagle_cuda_capture_end(device_, detail::raw(stream_), &g) == EAGLE_OK && g)
                eagle_cuda_graph_destroy(g);
        }
    }
    StreamCapturer(const StreamCapturer &) = delete;
    StreamCapturer &operator=(const StreamCapturer &) = delete;

    /** Start recording the stream. */
    void begin()
    {
        check(eagle_cuda_capture_begin(device_, detail::raw(stream_)),
              "eagle::cuda::StreamCapturer::begin");
        open_ = true;
    }
    /** Stop recording; the caller owns the graph (wrap it in a CapturedGraph). */
    GraphHandle end()
    {
        std::uint64_t g = 0;
        open_ = false; // ended even when the capture failed
        check(eagle_cuda_capture_end(device_, detail::raw(stream_), &g),
              "eagle::cuda::StreamCapturer::end");
        return detail::handle<CUgraph_st>(g);
    }

  private:
    int device_;
    StreamHandle stream_;
    bool open_ = false; // whether the destructor must end a capture
};

/** @brief A loaded module (PTX text or a cubin image) and its kernels. */
class Module
{
  public:
    Module(const void *image, int device = 0) : device_(device)
    {
        check(eagle_cuda_module_load(device, image, &module_), "eagle::cuda::Module");
    }
    ~Module()
    {
        if (module_)
            eagle_cuda_module_unload(device_, module_);
    }
    Module(Module &&other) noexcept
        : device_(other.device_), module_(std::exchange(other.module_, nullptr))
    {
    }
    Module(const Module &) = delete;
    Module &operator=(const Module &) = delete;

    /** The kernel of that (unmangled, extern "C") name: a CUfunction. */
    void *function(const char *name) const
    {
        void *fn = nullptr;
        check(eagle_cuda_module_function(device_, module_, name, &fn),
              "eagle::cuda::Module::function");
        return fn;
    }

  private:
    int device_;
    void *module_ = nullptr;
};

class Launcher;

/**
 * @brief A CUDA graph being described: eagle's nodes and captured graphs, in stages.
 *
 * Each node of a branch runs after the one before it; the first node of a
 * branch after every branch of the stage before.  launcher() instantiates it
 * once and hands it to the Launcher, which replays it.
 */
class Graph
{
  public:
    Graph() : g_(eagle_gpu_graph_new())
    {
        if (!g_)
            check(EAGLE_ERR_NOMEM, "eagle::cuda::Graph");
    }
    ~Graph() { eagle_gpu_graph_free(g_); }
    Graph(Graph &&other) noexcept : g_(std::exchange(other.g_, nullptr)) {}
    Graph &operator=(Graph &&other) noexcept
    {
        if (this != &other) {
            eagle_gpu_graph_free(g_);
            g_ = std::exchange(other.g_, nullptr);
        }
        return *this;
    }
    Graph(const Graph &) = delete;
    Graph &operator=(const Graph &) = delete;

    /** Replay on `stream` (the caller's: it must outlive the Launcher) instead of a stream of its own. */
    Graph &stream(StreamHandle stream)
    {
        check(eagle_gpu_set_stream(get("stream"), detail::raw(stream)),
              "eagle::cuda::Graph::stream");
        return *this;
    }
    /** Open a new stage; nodes go to its first branch. */
    Graph &stage()
    {
        check(eagle_gpu_stage(get("stage")), "eagle::cuda::Graph::stage");
        return *this;
    }
    /** Open the next branch of the current stage (it runs beside the others). */
    Graph &branch()
    {
        check(eagle_gpu_branch(get("branch")), "eagle::cuda::Graph::branch");
        return *this;
    }
    /** A captured graph as one node (a child graph node); the Graph owns it from now on.  Returns its node id. */
    int addNode(CapturedGraph &&captured)
    {
        int id = check(eagle_gpu_adopt_child(get("addNode"), detail::raw(captured.cuda())),
                       "eagle::cuda::Graph::addNode");
        captured.release();
        return id;
    }
    /** A kernel node of fixed launch dimensions; args[i] is parameter i.  Returns its node id. */
    int addKernel(void *function, std::array<std::uint32_t, 3> grid,
                  std::array<std::uint32_t, 3> block, const std::vector<eagle_arg> &args,
                  std::uint32_t sharedBytes = 0)
    {
        return check(eagle_gpu_add_kernel(get("addKernel"), function, grid.data(), block.data(),
                                          sharedBytes, args.data(),
                                          static_cast<std::int32_t>(args.size())),
                     "eagle::cuda::Graph::addKernel");
    }
    /**
     * A grid-stride kernel over n samples that Launcher::setLogicalSize retunes: its
     * parameters are args followed by one int64, the logical end eagle passes.
     */
    int addSamplesKernel(void *function, const std::vector<eagle_arg> &args, std::int64_t n)
    {
        return check(eagle_gpu_add_samples_kernel(get("addSamplesKernel"), function, args.data(),
                                                  static_cast<std::int32_t>(args.size()), n),
                     "eagle::cuda::Graph::addSamplesKernel");
    }
    /**
     * Build the CUDA graph on `device`, instantiate it once, and hand it to the Launcher
     * that replays it.  This Graph is empty afterwards.
     */
    Launcher launcher(int device = 0);

  private:
    eagle_gpu_graph *get(const char *method) const
    {
        if (!g_)
            throw Error(EAGLE_ERR_STATE, std::string("eagle::cuda::Graph::") + method +
                                             ": this Graph was handed to its Launcher by launcher() "
                                             "(or moved from): describe a new Graph");
        return g_;
    }

    eagle_gpu_graph *g_;
};

/**
 * @brief An instantiated graph: replays cost one graph launch each.
 *
 * launch() enqueues and returns; synchronize() waits for the replays and
 * reports a failure of any of them.
 */
class Launcher
{
  public:
    ~Launcher() { eagle_gpu_graph_free(g_); }
    Launcher(Launcher &&other) noexcept : g_(std::exchange(other.g_, nullptr)) {}
    Launcher &operator=(Launcher &&other) noexcept
    {
        if (this != &other) {
            eagle_gpu_graph_free(g_);
            g_ = std::exchange(other.g_, nullptr);
        }
        return *this;
    }
    Launcher(const Launcher &) = delete;
    Launcher &operator=(const Launcher &) = delete;

    /** One replay, enqueued on the graph's stream (a single cuGraphLaunch). */
    void launch() { launch(1); }
    /** n replays, enqueued. */
    void launch(std::int64_t n)
    {
        check(eagle_gpu_enqueue(get("launch"), n), "eagle::cuda::Launcher::launch");
    }
    /** Wait for the replays enqueued so far. */
    void synchronize()
    {
        check(eagle_gpu_synchronize(get("synchronize")), "eagle::cuda::Launcher::synchronize");
    }
    /**
     * Every samples kernel (Graph::addSamplesKernel) processes min(its n, n) samples
     * from the next replay on: patched into the instantiated graph, no re-capture.
     */
    void setLogicalSize(std::int64_t n)
    {
        check(eagle_gpu_set_logical_size(get("setLogicalSize"), n),
              "eagle::cuda::Launcher::setLogicalSize");
    }
    /** The stream replays run on. */
    StreamHandle stream() const
    {
        std::uint64_t s = 0;
        check(eagle_gpu_stream(get("stream"), &s), "eagle::cuda::Launcher::stream");
        return detail::handle<CUstream_st>(s);
    }
    /** Counters: CUDA graphs built, instantiations, replays enqueued (EAGLE_GPU_STAT_*). */
    std::array<std::int64_t, EAGLE_GPU_NSTATS> stats() const
    {
        std::array<std::int64_t, EAGLE_GPU_NSTATS> out{};
        eagle_gpu_graph_stats(get("stats"), out.data());
        return out;
    }

  private:
    friend class Graph;
    explicit Launcher(eagle_gpu_graph *g) noexcept : g_(g) {}
    eagle_gpu_graph *get(const char *method) const
    {
        if (!g_)
            throw Error(EAGLE_ERR_STATE,
                        std::string("eagle::cuda::Launcher::") + method
                            + ": this Launcher was moved from");
        return g_;
    }

    eagle_gpu_graph *g_;
};

inline Launcher Graph::launcher(int device)
{
    check(eagle_gpu_instantiate(get("launcher"), device, 0), "eagle::cuda::Graph::launcher");
    return Launcher(std::exchange(g_, nullptr));
}

/** @brief Device memory (cuMemAlloc), freed with the object. */
class DeviceMemory
{
  public:
    explicit DeviceMemory(std::size_t bytes, int device = 0) : device_(device), bytes_(bytes)
    {
        check(eagle_cuda_malloc(device, bytes, &address_), "eagle::cuda::DeviceMemory");
    }
    ~DeviceMemory()
    {
        if (address_)
            eagle_cuda_free(device_, address_);
    }
    DeviceMemory(DeviceMemory &&other) noexcept
        : device_(other.device_), bytes_(other.bytes_), address_(std::exchange(other.address_, 0))
    {
    }
    DeviceMemory(const DeviceMemory &) = delete;
    DeviceMemory &operator=(const DeviceMemory &) = delete;

    /** The device address, typed for a kernel parameter. */
    template <class T = void> T *get() const noexcept { return detail::handle<T>(address_); }
    std::uint64_t address() const noexcept { return address_; }
    std::size_t bytes() const noexcept { return bytes_; }
    /** Copy bytes() bytes from host memory in, or out to it (synchronous). */
    void copyFrom(const void *host)
    {
        check(eagle_cuda_memcpy(device_, address_, detail::raw(host), bytes_),
              "eagle::cuda::DeviceMemory::copyFrom");
    }
    void copyTo(void *host) const
    {
        check(eagle_cuda_memcpy(device_, detail::raw(host), address_, bytes_),
              "eagle::cuda::DeviceMemory::copyTo");
    }

  private:
    int device_;
    std::size_t bytes_;
    std::uint64_t address_ = 0;
};

} // namespace eagle::cuda

#endif // EAGLE_CUDA_HPP

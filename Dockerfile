# The image `charts/helm-drift` runs: `helm-drift watch`, a static binary on a distroless base,
# non-root. Multi-arch with buildx (linux/amd64, linux/arm64):
#   docker buildx build --platform linux/amd64,linux/arm64 -t ghcr.io/helm-drift/helm-drift:0.1.0 .
# (This project's own machines have no container engine: the release workflow builds it.)

FROM --platform=$BUILDPLATFORM rust:1.89-bookworm AS build
ARG TARGETARCH
RUN apt-get update && apt-get install -y --no-install-recommends musl-tools gcc-aarch64-linux-gnu \
    && rm -rf /var/lib/apt/lists/*
RUN case "$TARGETARCH" in \
      amd64) echo x86_64-unknown-linux-musl > /target ;; \
      arm64) echo aarch64-unknown-linux-musl > /target ;; \
      *) echo "unsupported architecture $TARGETARCH" >&2; exit 1 ;; \
    esac && rustup target add "$(cat /target)"
ENV CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER=aarch64-linux-gnu-gcc \
    CC_aarch64_unknown_linux_musl=aarch64-linux-gnu-gcc
WORKDIR /src
# The commit for `helm-drift version` (the build context has no .git).
ARG HELM_DRIFT_COMMIT=unknown
ENV HELM_DRIFT_COMMIT=$HELM_DRIFT_COMMIT
COPY Cargo.toml Cargo.lock build.rs ./
COPY crates crates
COPY src src
RUN cargo build --release --locked -p helm-drift --target "$(cat /target)" \
    && cp "target/$(cat /target)/release/helm-drift" /helm-drift

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /helm-drift /helm-drift
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/helm-drift"]
CMD ["watch", "--all-namespaces", "--log-format", "json"]

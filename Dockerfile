# lakewriter in a container: `docker compose up` runs the demo against MinIO (see README). Built
# with the `ballista` feature, so that the same image runs a cluster's scheduler and executors
# (`docker compose --profile cluster up`, docs/guide/engine.md).
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release -p lakewriter-cli --bin lakewriter --features ballista

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/release/lakewriter /usr/local/bin/lakewriter
WORKDIR /work
ENTRYPOINT ["lakewriter"]
CMD ["demo", "/work/demo"]

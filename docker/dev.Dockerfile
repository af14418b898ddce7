# corral-yarn in a container: the README's two quick-start commands on a Debian base.
#   scripts/containers.sh dev-image       (podman here: base from Debian packages, extra CAs from CA_BUNDLE)
#   docker build -f docker/dev.Dockerfile -t corral-yarn-dev .
#   docker run --rm corral-yarn-dev              # make demo: the pipeline on the embedded cluster
#   docker run --rm corral-yarn-dev make test    # every test
ARG BASE=debian:bookworm-slim
FROM ${BASE}
COPY docker/ca/ /usr/local/share/ca-certificates/extra/
RUN apt-get update -q \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      ca-certificates make git python3 python3-venv openjdk-17-jdk-headless maven iproute2 gcc libc6-dev \
 && update-ca-certificates && rm -rf /var/lib/apt/lists/*
ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt
WORKDIR /corral-yarn
COPY . .
RUN rm -rf .venv java_patch/target .corral && make setup
CMD ["make", "demo"]

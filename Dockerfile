# syntax=docker/dockerfile:1
# graphcd's image for people who build with Docker: the same files, user
# and entrypoint as `make image` (hack/image), which needs no Docker and is
# what graphcd's own releases use. Build for the platform you run on, or
# several with buildx:
#
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     --build-arg VERSION=v0.3.0 --build-arg REVISION=$(git rev-parse HEAD) -t graphcd .

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
ARG REVISION=unknown
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN go run ./hack/image --rootfs /rootfs --platforms "$TARGETOS/$TARGETARCH" --version "$VERSION" --revision "$REVISION"

FROM scratch
ARG VERSION=dev
ARG REVISION=unknown
COPY --from=build /rootfs/ /
COPY --from=build --chown=65532:65532 /rootfs/home/nonroot /home/nonroot
USER 65532:65532
WORKDIR /home/nonroot
ENV PATH=/usr/local/bin HOME=/home/nonroot SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
LABEL org.opencontainers.image.title=graphcd \
      org.opencontainers.image.source=https://github.com/graphcd/graphcd \
      org.opencontainers.image.version=$VERSION \
      org.opencontainers.image.revision=$REVISION
ENTRYPOINT ["/usr/local/bin/graphcd"]
CMD ["server"]

# perfdag's container image: one static binary on an empty base, run as a non-root user.
#
#   docker build --build-arg VERSION=$(git describe --always --dirty) -t registry.example.com/perfdag:v1 .
#
# Base images cannot be pulled where perfdag is tested, so TestImageRootRunsQuickstart
# (cmd/perfdag) builds the same binary with the same flags and runs the quickstart as non-root
# in an empty root holding only what the final stage copies; it fails if the COPY lines change.
FROM golang:1.26 AS build
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/perfdag ./cmd/perfdag \
 && mkdir -p /out/tmp && chmod 1777 /out/tmp

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /usr/share/zoneinfo /usr/share/zoneinfo
COPY --from=build /out/tmp /tmp
COPY --from=build /out/perfdag /perfdag
USER 65532:65532
ENTRYPOINT ["/perfdag"]

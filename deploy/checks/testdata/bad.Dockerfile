# Self-test fixture for the Dockerfile lint: breaks many rules on purpose.
ARG BASE=eclipse-temurin:latest
FROM maven AS build
WORKDIR src
ADD . .
RUN apt-get update && apt-get install -y curl
RUN mvn package | tee build.log

FROM ${BASE}
COPY --from=builder /x /y
COPY src/main/app.jar /app.jar
COPY fanout-node/target/wrong.jar /app/wrong.jar
USER root
EXPOSE 8080
HEALTHCHECK --interval=5s curl -f http://127.0.0.1:8080/readyz
CMD java -jar /app.jar

# Self-test fixture for the Dockerfile lint: breaks many rules on purpose.
FROM maven AS build
WORKDIR src
ADD . .
RUN apt-get update && apt-get install -y curl
RUN mvn package | tee build.log

FROM eclipse-temurin:latest
COPY --from=builder /x /y
COPY target/app.jar /app.jar
COPY --from=build /src/fanout-node/target/wrong.jar /app/wrong.jar
USER root
CMD java -jar /app.jar

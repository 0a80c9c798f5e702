FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY wheretorun ./wheretorun
RUN pip install --no-cache-dir .
ENV WHERETORUN_HOST=0.0.0.0
EXPOSE 8000
CMD ["wheretorun", "serve"]

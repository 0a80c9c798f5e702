"""shared state of the replicas: idempotency records and rate-limit counters

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "idempotency_records",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("owner", sa.String(length=80), nullable=False),
        sa.Column("method", sa.String(length=10), nullable=False),
        sa.Column("path", sa.String(length=400), nullable=False),
        sa.Column("idempotency_key", sa.String(length=255), nullable=False),
        sa.Column("request_sha256", sa.String(length=64), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("response_status", sa.Integer(), nullable=True),
        sa.Column("response_headers", sa.JSON(), nullable=True),
        sa.Column("response_body", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("expires_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_idempotency_records")),
    )
    with op.batch_alter_table("idempotency_records", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_idempotency_records_expires_at"), ["expires_at"], unique=False)

    op.create_table(
        "rate_limit_counters",
        sa.Column("bucket", sa.String(length=200), nullable=False),
        sa.Column("hits", sa.Integer(), nullable=False),
        sa.Column("expires_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("bucket", name=op.f("pk_rate_limit_counters")),
    )
    with op.batch_alter_table("rate_limit_counters", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_rate_limit_counters_expires_at"), ["expires_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("rate_limit_counters", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_rate_limit_counters_expires_at"))
    op.drop_table("rate_limit_counters")
    with op.batch_alter_table("idempotency_records", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_idempotency_records_expires_at"))
    op.drop_table("idempotency_records")

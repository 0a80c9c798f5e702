"""commitment terms; what a purchase price buys (a chip, or a system of N accelerators)

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

from decimal import Decimal

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

TIMESTAMP = sa.DateTime(timezone=True)


def money(precision: int, scale: int) -> sa.types.TypeEngine[Decimal]:
    """Exact amounts: NUMERIC on PostgreSQL, a scaled integer on SQLite (see pricing/types.py)."""
    return sa.Numeric(precision, scale).with_variant(sa.BigInteger(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "commitment_terms",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("provider", sa.String(length=40), nullable=False),
        sa.Column("accelerator_id", sa.String(length=80), nullable=False),
        sa.Column("instance_family", sa.String(length=120), nullable=False),
        sa.Column("term_months", sa.Integer(), nullable=False),
        sa.Column("discount_fraction", money(10, 6), nullable=True),
        sa.Column("usd_per_accelerator_hour", money(14, 6), nullable=True),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("fetched_at", TIMESTAMP, nullable=False),
        sa.Column("effective_from", TIMESTAMP, nullable=False),
        sa.Column("effective_to", TIMESTAMP, nullable=True),
        sa.Column("catalog_version_id", sa.Integer(), nullable=False),
        sa.CheckConstraint(
            "(discount_fraction IS NULL) <> (usd_per_accelerator_hour IS NULL)",
            name=op.f("ck_commitment_terms_one_price"),
        ),
        sa.CheckConstraint("term_months > 0", name=op.f("ck_commitment_terms_term_months")),
        sa.ForeignKeyConstraint(
            ["catalog_version_id"],
            ["catalog_versions.id"],
            name=op.f("fk_commitment_terms_catalog_version_id_catalog_versions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_commitment_terms")),
    )
    with op.batch_alter_table("commitment_terms", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_commitment_terms_catalog_version_id"), ["catalog_version_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_commitment_terms_effective_from"), ["effective_from"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_commitment_terms_provider"), ["provider"], unique=False)
        batch_op.create_index(
            "uq_commitment_terms_current",
            ["provider", "accelerator_id", "instance_family", "term_months"],
            unique=True,
            sqlite_where=sa.text("effective_to IS NULL"),
            postgresql_where=sa.text("effective_to IS NULL"),
        )

    with op.batch_alter_table("hardware_prices", schema=None) as batch_op:
        batch_op.add_column(sa.Column("basis", sa.String(length=10), server_default="chip", nullable=False))
        batch_op.add_column(
            sa.Column("accelerators_per_unit", sa.Integer(), server_default="1", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("hardware_prices", schema=None) as batch_op:
        batch_op.drop_column("accelerators_per_unit")
        batch_op.drop_column("basis")

    with op.batch_alter_table("commitment_terms", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_commitment_terms_current",
            sqlite_where=sa.text("effective_to IS NULL"),
            postgresql_where=sa.text("effective_to IS NULL"),
        )
        batch_op.drop_index(batch_op.f("ix_commitment_terms_provider"))
        batch_op.drop_index(batch_op.f("ix_commitment_terms_effective_from"))
        batch_op.drop_index(batch_op.f("ix_commitment_terms_catalog_version_id"))

    op.drop_table("commitment_terms")

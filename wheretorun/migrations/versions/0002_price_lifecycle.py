"""price lifecycle: energy prices, API keys, import runs, audit log, price overrides

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

from decimal import Decimal

import sqlalchemy as sa
from alembic import op


revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def money(precision: int, scale: int) -> sa.types.TypeEngine[Decimal]:
    """Exact amounts: NUMERIC on PostgreSQL, a scaled integer on SQLite (see pricing/types.py)."""
    return sa.Numeric(precision, scale).with_variant(sa.BigInteger(), "sqlite")


TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "energy_prices",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("region", sa.String(length=120), nullable=False),
        sa.Column("usd_per_kwh", money(12, 6), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("fetched_at", TIMESTAMP, nullable=False),
        sa.Column("effective_from", TIMESTAMP, nullable=False),
        sa.Column("effective_to", TIMESTAMP, nullable=True),
        sa.Column("catalog_version_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["catalog_version_id"],
            ["catalog_versions.id"],
            name=op.f("fk_energy_prices_catalog_version_id_catalog_versions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_energy_prices")),
    )
    with op.batch_alter_table("energy_prices", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_energy_prices_catalog_version_id"), ["catalog_version_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_energy_prices_effective_from"), ["effective_from"], unique=False)
        batch_op.create_index(batch_op.f("ix_energy_prices_region"), ["region"], unique=False)
        batch_op.create_index(
            "uq_energy_prices_current",
            ["region"],
            unique=True,
            sqlite_where=sa.text("effective_to IS NULL"),
            postgresql_where=sa.text("effective_to IS NULL"),
        )

    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("token_sha256", sa.String(length=64), nullable=False),
        sa.Column("scope", sa.String(length=10), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("revoked_at", TIMESTAMP, nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("token_sha256", name=op.f("uq_api_keys_token_sha256")),
    )

    op.create_table(
        "import_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("format", sa.String(length=20), nullable=False),
        sa.Column("provider", sa.String(length=40), nullable=True),
        sa.Column("source_kind", sa.String(length=10), nullable=False),
        sa.Column("source_url", sa.Text(), nullable=True),
        sa.Column("filename", sa.String(length=255), nullable=True),
        sa.Column("sha256", sa.String(length=64), nullable=True),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.Column("etag", sa.Text(), nullable=True),
        sa.Column("last_modified", sa.String(length=64), nullable=True),
        sa.Column("fetched_at", TIMESTAMP, nullable=False),
        sa.Column("force", sa.Boolean(), nullable=False),
        sa.Column("based_on_version_id", sa.Integer(), nullable=True),
        sa.Column("catalog_version_id", sa.Integer(), nullable=True),
        sa.Column("api_key_id", sa.Integer(), nullable=True),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("diff", sa.JSON(), nullable=False),
        sa.Column("hold_reasons", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["api_key_id"], ["api_keys.id"], name=op.f("fk_import_runs_api_key_id_api_keys")
        ),
        sa.ForeignKeyConstraint(
            ["based_on_version_id"],
            ["catalog_versions.id"],
            name=op.f("fk_import_runs_based_on_version_id_catalog_versions"),
        ),
        sa.ForeignKeyConstraint(
            ["catalog_version_id"],
            ["catalog_versions.id"],
            name=op.f("fk_import_runs_catalog_version_id_catalog_versions"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_import_runs")),
    )
    with op.batch_alter_table("import_runs", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_import_runs_catalog_version_id"), ["catalog_version_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_import_runs_status"), ["status"], unique=False)

    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", TIMESTAMP, nullable=False),
        sa.Column("api_key_id", sa.Integer(), nullable=True),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("action", sa.String(length=60), nullable=False),
        sa.Column("target", sa.String(length=200), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["api_key_id"], ["api_keys.id"], name=op.f("fk_audit_log_api_key_id_api_keys")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
    )
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_audit_log_api_key_id"), ["api_key_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_audit_log_at"), ["at"], unique=False)

    op.create_table(
        "price_overrides",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("applies_to", sa.String(length=20), nullable=False),
        sa.Column("provider", sa.String(length=80), nullable=False),
        sa.Column("region", sa.String(length=120), nullable=True),
        sa.Column("instance_type", sa.String(length=120), nullable=True),
        sa.Column("accelerator_id", sa.String(length=80), nullable=True),
        sa.Column("model_id", sa.String(length=300), nullable=True),
        sa.Column("multiplier", money(10, 6), nullable=True),
        sa.Column("fixed_usd_per_hour", money(14, 6), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("effective_from", TIMESTAMP, nullable=False),
        sa.Column("effective_to", TIMESTAMP, nullable=True),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.Column("api_key_id", sa.Integer(), nullable=True),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.CheckConstraint(
            "(multiplier IS NULL) <> (fixed_usd_per_hour IS NULL)",
            name=op.f("ck_price_overrides_one_adjustment"),
        ),
        sa.ForeignKeyConstraint(
            ["accelerator_id"],
            ["accelerators.id"],
            name=op.f("fk_price_overrides_accelerator_id_accelerators"),
        ),
        sa.ForeignKeyConstraint(
            ["api_key_id"], ["api_keys.id"], name=op.f("fk_price_overrides_api_key_id_api_keys")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_price_overrides")),
    )
    with op.batch_alter_table("price_overrides", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_price_overrides_effective_from"), ["effective_from"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_price_overrides_provider"), ["provider"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("price_overrides", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_price_overrides_provider"))
        batch_op.drop_index(batch_op.f("ix_price_overrides_effective_from"))

    op.drop_table("price_overrides")
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_audit_log_at"))
        batch_op.drop_index(batch_op.f("ix_audit_log_api_key_id"))

    op.drop_table("audit_log")
    with op.batch_alter_table("import_runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_import_runs_status"))
        batch_op.drop_index(batch_op.f("ix_import_runs_catalog_version_id"))

    op.drop_table("import_runs")
    op.drop_table("api_keys")
    with op.batch_alter_table("energy_prices", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_energy_prices_current",
            sqlite_where=sa.text("effective_to IS NULL"),
            postgresql_where=sa.text("effective_to IS NULL"),
        )
        batch_op.drop_index(batch_op.f("ix_energy_prices_region"))
        batch_op.drop_index(batch_op.f("ix_energy_prices_effective_from"))
        batch_op.drop_index(batch_op.f("ix_energy_prices_catalog_version_id"))

    op.drop_table("energy_prices")

"""wheretorun: where should this AI workload run, and what will it cost?"""
